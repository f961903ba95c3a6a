package access

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
)

var dialects = []string{store.Postgres, store.SQLite}

func newCodes(t *testing.T, dialect string) (*Codes, *clockwork.FakeClock) {
	t.Helper()
	db := storetest.Migrated(t, dialect)
	h, err := NewHasher([]byte("the deployment's secret 0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClockAt(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
	return New(db.DB, h, clock.Now), clock
}

// TestRedeemConcurrently: of many concurrent redemptions of one code by
// distinct visitors, exactly its uses succeed, and the rest are told it
// is used up; its count of uses is exact.
func TestRedeemConcurrently(t *testing.T) {
	ctx := context.Background()
	for _, dialect := range dialects {
		for _, tc := range []struct {
			uses, tries int
		}{{1, 1000}, {10, 1000}} {
			t.Run(fmt.Sprintf("%s, %d uses", dialect, tc.uses), func(t *testing.T) {
				t.Parallel()
				c, _ := newCodes(t, dialect)
				added, err := c.Generate(ctx, "drop", 1, Spec{Line: "presale", Uses: tc.uses})
				if err != nil {
					t.Fatal(err)
				}
				code := added.Codes[0]
				var ok, usedUp atomic.Int64
				var wg sync.WaitGroup
				errs := make(chan error, tc.tries)
				for i := range tc.tries {
					wg.Go(func() {
						g, err := c.Redeem(ctx, "drop", code, fmt.Sprintf("visitor-%d", i))
						switch {
						case err == nil && g.Line == "presale" && !g.Again:
							ok.Add(1)
						case errors.Is(err, ErrUsedUp):
							usedUp.Add(1)
						default:
							errs <- fmt.Errorf("redeem: %+v %v", g, err)
						}
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Fatal(err)
				}
				if ok.Load() != int64(tc.uses) || usedUp.Load() != int64(tc.tries-tc.uses) {
					t.Fatalf("%d redeemed and %d used up, want %d and %d", ok.Load(), usedUp.Load(), tc.uses, tc.tries-tc.uses)
				}
				counts, err := c.Counts(ctx, "drop")
				if err != nil || len(counts) != 1 || counts[0].Used != int64(tc.uses) || counts[0].Left != 0 {
					t.Fatalf("counts %+v %v, want %d used and none left", counts, err, tc.uses)
				}
			})
		}
	}
}

// TestRedeem: a code is redeemed once per visitor, in its own room, before
// it expires; typed in any case, with or without its dashes. Refusals say
// why. A released use can be taken again; releasing a grant that took no
// use gives nothing back.
func TestRedeem(t *testing.T) {
	ctx := context.Background()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			c, clock := newCodes(t, dialect)
			expires := clock.Now().Add(time.Hour)
			gen, err := c.Generate(ctx, "drop", 2, Spec{Uses: 2, ExpiresAt: &expires})
			if err != nil || len(gen.Codes) != 2 || gen.Added != 2 {
				t.Fatalf("generate: %+v %v", gen, err)
			}
			if _, err := c.Import(ctx, "other", []string{"FAN-2026-0001"}, Spec{Uses: 1}); err != nil {
				t.Fatal(err)
			}
			code := gen.Codes[0]
			loose := strings.ToLower(strings.ReplaceAll(code, "-", " "))
			grants := map[string]Grant{}
			steps := []struct {
				name, room, code, visitor string
				release                   string // release this visitor's grant of the step's code first
				advance                   time.Duration
				want                      error
				again                     bool
				used                      int64 // the room's uses used after the step
			}{
				{"first use", "drop", code, "v1", "", 0, nil, false, 1},
				{"the same visitor again, typed loosely", "drop", loose, "v1", "", 0, nil, true, 1},
				{"a second visitor", "drop", code, "v2", "", 0, nil, false, 2},
				{"a third: used up", "drop", code, "v3", "", 0, ErrUsedUp, false, 2},
				{"v2's use given back: v3 takes it", "drop", code, "v3", "v2", 0, nil, false, 2},
				{"v1's second grant took none: gives none back", "drop", code, "v4", "v1-again", 0, ErrUsedUp, false, 2},
				{"another room's code", "drop", "fan20260001", "v1", "", 0, ErrWrongRoom, false, 2},
				{"a code nobody made", "drop", "ZZZZ-ZZZZ-ZZZZ", "v1", "", 0, ErrUnknown, false, 2},
				{"not a code", "drop", "<script>", "v1", "", 0, ErrUnknown, false, 2},
				{"the other code, past its expiry", "drop", gen.Codes[1], "v1", "", time.Hour, ErrExpired, false, 2},
			}
			for _, s := range steps {
				clock.Advance(s.advance)
				if s.release != "" {
					who, g := strings.TrimSuffix(s.release, "-again"), grants[s.release]
					if err := c.Release(ctx, s.room, s.code, who, g); err != nil {
						t.Fatalf("%s: release: %v", s.name, err)
					}
				}
				g, err := c.Redeem(ctx, s.room, s.code, s.visitor)
				if !errors.Is(err, s.want) || (err == nil && g.Again != s.again) {
					t.Fatalf("%s: %+v %v, want %v (again %v)", s.name, g, err, s.want, s.again)
				}
				key := s.visitor
				if g.Again {
					key += "-again"
				}
				grants[key] = g
				counts, err := c.Counts(ctx, "drop")
				if err != nil || len(counts) != 1 || counts[0].Used != s.used {
					t.Fatalf("%s: counts %+v %v, want %d used", s.name, counts, err, s.used)
				}
			}
			counts, err := c.Counts(ctx, "drop")
			if err != nil || len(counts) != 1 || counts[0].Codes != 2 || counts[0].Uses != 4 || counts[0].Left != 0 {
				t.Fatalf("counts, both expired: %+v %v", counts, err)
			}
			list, err := c.List(ctx, "drop", 0, 10)
			if err != nil || len(list) != 2 || list[0].Used != 2 || list[0].Hint != code[len(code)-3:] || list[0].ExpiresAt == nil {
				t.Fatalf("list: %+v %v", list, err)
			}
			if next, err := c.List(ctx, "drop", list[0].ID, 10); err != nil || len(next) != 1 || next[0].ID != list[1].ID {
				t.Fatalf("the page after the first code: %+v %v", next, err)
			}
			if crm, _ := c.List(ctx, "other", 0, 1); len(crm) != 1 || crm[0].Hint != "001" {
				t.Fatalf("an 11-character code's hint: %+v, want its last three characters", crm)
			}
		})
	}
}

// TestHeld: a visitor's redemption is held until released, in its room
// only, and as a repeat (it took its use once).
func TestHeld(t *testing.T) {
	ctx := context.Background()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			c, _ := newCodes(t, dialect)
			if _, err := c.Import(ctx, "drop", []string{"PRESALE-0001"}, Spec{Uses: 1, Line: "presale"}); err != nil {
				t.Fatal(err)
			}
			steps := []struct {
				name    string
				do      func() error
				room    string
				visitor string
				held    bool
			}{
				{"nothing redeemed", nil, "drop", "v1", false},
				{"redeemed", func() error { _, err := c.Redeem(ctx, "drop", "presale0001", "v1"); return err }, "drop", "v1", true},
				{"another visitor", nil, "drop", "v2", false},
				{"another room", nil, "other", "v1", false},
				{"released", func() error {
					return c.Release(ctx, "drop", "presale0001", "v1", Grant{Line: "presale"})
				}, "drop", "v1", false},
			}
			for _, s := range steps {
				if s.do != nil {
					if err := s.do(); err != nil {
						t.Fatalf("%s: %v", s.name, err)
					}
				}
				g, ok, err := c.Held(ctx, s.room, s.visitor)
				if err != nil || ok != s.held || (ok && (g.Line != "presale" || !g.Again)) {
					t.Fatalf("%s: Held %+v %v %v, want held %v in line presale, again", s.name, g, ok, err, s.held)
				}
			}
		})
	}
}

// TestGenerateMaxBatch: the largest batch goes in one call, every code
// distinct and redeemable.
func TestGenerateMaxBatch(t *testing.T) {
	ctx := context.Background()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			c, _ := newCodes(t, dialect)
			gen, err := c.Generate(ctx, "drop", MaxBatch, Spec{Uses: 1})
			if err != nil || gen.Added != MaxBatch || len(gen.Codes) != MaxBatch {
				t.Fatalf("generate %d: %d codes, %v", MaxBatch, len(gen.Codes), err)
			}
			seen := make(map[string]bool, MaxBatch)
			for _, code := range gen.Codes {
				seen[code] = true
			}
			counts, err := c.Counts(ctx, "drop")
			if len(seen) != MaxBatch || err != nil || len(counts) != 1 || counts[0].Codes != MaxBatch {
				t.Fatalf("%d distinct codes, counts %+v %v", len(seen), counts, err)
			}
			if _, err := c.Redeem(ctx, "drop", gen.Codes[MaxBatch-1], "v1"); err != nil {
				t.Fatalf("redeem the last code: %v", err)
			}
		})
	}
}

// TestImport: uploaded codes are normalized, repeated ones skipped, and a
// malformed one refuses the upload, naming its place.
func TestImport(t *testing.T) {
	ctx := context.Background()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			c, clock := newCodes(t, dialect)
			past := clock.Now().Add(-time.Minute)
			for _, tc := range []struct {
				name  string
				codes []string
				spec  Spec
				want  Added
				err   string
			}{
				{"fresh", []string{"VIP-0001", "vip0002", "VIP 0003"}, Spec{Uses: 1}, Added{Added: 3}, ""},
				{"repeats", []string{"VIP-0001", "VIP-0004", "vip-0004"}, Spec{Uses: 1}, Added{Added: 1, Skipped: 2}, ""},
				{"too short", []string{"VIP-0005", "ab"}, Spec{Uses: 1}, Added{}, "code 2"},
				{"a symbol", []string{"VIP/0006"}, Spec{Uses: 1}, Added{}, "code 1"},
				{"no uses", []string{"VIP-0007"}, Spec{}, Added{}, "uses"},
				{"a bad line", []string{"VIP-0008"}, Spec{Uses: 1, Line: "pre sale"}, Added{}, "line"},
				{"expired already", []string{"VIP-0009"}, Spec{Uses: 1, ExpiresAt: &past}, Added{}, "expiresAt"},
				{"empty", nil, Spec{Uses: 1}, Added{}, "from 1"},
			} {
				got, err := c.Import(ctx, "drop", tc.codes, tc.spec)
				if tc.err != "" {
					if err == nil || !strings.Contains(err.Error(), tc.err) {
						t.Fatalf("%s: %v, want an error about %q", tc.name, err, tc.err)
					}
					continue
				}
				if err != nil || got.Added != tc.want.Added || got.Skipped != tc.want.Skipped || got.Codes != nil {
					t.Fatalf("%s: %+v %v, want %+v", tc.name, got, err, tc.want)
				}
			}
			counts, err := c.Counts(ctx, "drop")
			if err != nil || len(counts) != 1 || counts[0].Codes != 4 {
				t.Fatalf("counts: %+v %v, want the 4 codes of the good uploads", counts, err)
			}
			// A code of under ten characters keeps no hint: three of its
			// seven would give it away.
			if list, _ := c.List(ctx, "drop", 0, 10); len(list) != 4 || list[0].Hint != "" {
				t.Fatalf("short codes' hints: %+v, want none", list)
			}
		})
	}
}

// TestRevoke: a code revoked by its text (typed loosely) or by its id
// redeems no more; the places it bought stay counted nowhere else; an
// unknown code or another room's is not found.
func TestRevoke(t *testing.T) {
	ctx := context.Background()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			c, _ := newCodes(t, dialect)
			gen, err := c.Generate(ctx, "drop", 3, Spec{Uses: 5})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Redeem(ctx, "drop", gen.Codes[0], "v1"); err != nil {
				t.Fatal(err)
			}
			list, _ := c.List(ctx, "drop", 0, 10)
			for _, tc := range []struct {
				name, room, code string
				id               int64
				want             error
			}{
				{"by its text, typed loosely", "drop", strings.ToLower(gen.Codes[0]), 0, nil},
				{"by its id", "drop", "", list[1].ID, nil},
				{"again", "drop", gen.Codes[0], 0, ErrUnknown},
				{"another room's", "other", gen.Codes[2], 0, ErrUnknown},
				{"another room's id", "other", "", list[2].ID, ErrUnknown},
				{"not a code", "drop", "<x>", 0, ErrUnknown},
			} {
				if _, err := c.Revoke(ctx, tc.room, tc.code, tc.id); !errors.Is(err, tc.want) || (err != nil) != (tc.want != nil) {
					t.Fatalf("%s: %v, want %v", tc.name, err, tc.want)
				}
			}
			for i, want := range []error{ErrUnknown, ErrUnknown, nil} {
				if _, err := c.Redeem(ctx, "drop", gen.Codes[i], "v9"); !errors.Is(err, want) || (err != nil) != (want != nil) {
					t.Fatalf("code %d after the revocations: %v, want %v", i, err, want)
				}
			}
		})
	}
}
