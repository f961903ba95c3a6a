package web

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"waitingroom/server/access"
	"waitingroom/server/audit"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
	"waitingroom/web/console"
)

// codesHarness is a harness whose server keeps access codes in a freshly
// migrated database of dialect, and records its audit log there.
func codesHarness(t *testing.T, dialect string) (*harness, *access.Codes, *audit.Log) {
	t.Helper()
	db := storetest.Migrated(t, dialect)
	key, err := access.NewHasher([]byte("test-secret-key-0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	codes := access.New(db.DB, key, time.Now)
	log := audit.New(db)
	return newHarness(t, func(o *Options) { o.Codes, o.Audit = codes, log }), codes, log
}

// TestCodesAdminAPI: generating codes answers them once and counts them;
// an uploaded CSV adds its codes, skipping repeats; the export lists the
// codes by hint, never whole; every refusal says what to change.
func TestCodesAdminAPI(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			h, codes, log := codesHarness(t, dialect)
			base := "/api/admin/rooms/" + h.room + "/codes"
			var gen access.Added
			r := h.do(t, "POST", base, `{"count":3,"uses":2,"line":"presale"}`, adminAuth, nil)
			r.json(t, &gen)
			if r.status != 201 || len(gen.Codes) != 3 || gen.Added != 3 {
				t.Fatalf("generate: %d %s", r.status, r.body)
			}
			csvHdr := map[string]string{"Authorization": adminAuth["Authorization"], "Content-Type": "text/csv"}
			// A CRM's export: the codes in a named column, the expiry's
			// "+09:00" left unescaped in the query.
			r = h.do(t, "POST", base+"?uses=1&line=fans&expiresAt="+time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04:05")+"+00:00",
				"email,Coupon Code\na@example.com,FAN-0001\nb@example.com,fan 0002\n\nc@example.com,FAN-0001\n", csvHdr, nil)
			var imp access.Added
			r.json(t, &imp)
			if r.status != 201 || imp.Added != 2 || imp.Skipped != 1 || imp.Codes != nil {
				t.Fatalf("import: %d %s", r.status, r.body)
			}
			var counts struct{ Lines []access.LineCount }
			h.do(t, "GET", base, "", adminAuth, nil).json(t, &counts)
			want := []access.LineCount{{Line: "fans", Codes: 2, Uses: 2, Left: 2}, {Line: "presale", Codes: 3, Uses: 6, Left: 6}}
			if len(counts.Lines) != 2 || counts.Lines[0] != want[0] || counts.Lines[1] != want[1] {
				t.Fatalf("counts: %+v, want %+v", counts.Lines, want)
			}
			// A code made through the API redeems.
			if g, err := codes.Redeem(context.Background(), h.room, gen.Codes[0], "v1"); err != nil || g.Line != "presale" {
				t.Fatalf("redeem a generated code: %+v %v", g, err)
			}
			r = h.do(t, "GET", base+".csv", "", adminAuth, nil)
			rows, err := csv.NewReader(strings.NewReader(r.body)).ReadAll()
			if r.status != 200 || err != nil || len(rows) != 6 || rows[0][1] != "hint" || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") {
				t.Fatalf("export: %d %v %q", r.status, err, r.body)
			}
			for _, c := range gen.Codes {
				if strings.Contains(r.body, c) || strings.Contains(r.body, strings.ReplaceAll(c, "-", "")) {
					t.Fatalf("the export holds the code %s", c)
				}
			}
			if rows[1][4] != "1" || rows[1][1] != gen.Codes[0][len(gen.Codes[0])-3:] {
				t.Fatalf("export's first code: %v, want used 1 and its hint", rows[1])
			}
			entries, err := log.List(context.Background(), audit.Filter{Room: h.room})
			if err != nil || len(entries) != 2 || strings.Contains(entries[0].New+entries[1].New, gen.Codes[0]) {
				t.Fatalf("audit: %+v %v, want two entries without the codes", entries, err)
			}
			past := time.Now().Add(-time.Hour).Format(time.RFC3339)
			for _, tc := range []struct {
				name, path, body string
				hdr              map[string]string
				status           int
				code             string
			}{
				{"no token", base, `{"count":1}`, nil, 401, "unauthorized"},
				{"no count", base, `{"uses":1}`, adminAuth, 400, "bad_codes"},
				{"too many", base, `{"count":10001}`, adminAuth, 400, "bad_codes"},
				{"negative uses", base, `{"count":1,"uses":-1}`, adminAuth, 400, "bad_codes"},
				{"a bad line", base, `{"count":1,"line":"pre sale"}`, adminAuth, 400, "bad_codes"},
				{"expired already", base, `{"count":1,"expiresAt":"` + past + `"}`, adminAuth, 400, "bad_codes"},
				{"unknown field", base, `{"count":1,"use":1}`, adminAuth, 400, "bad_json"},
				{"a malformed upload", base, "GOOD-0001\nno/slash\n", csvHdr, 400, "bad_codes"},
				{"a CSV that does not read", base, "\"open quote\n", csvHdr, 400, "bad_codes"},
				{"an empty upload", base, "code\n", csvHdr, 400, "bad_codes"},
				{"uses not a number", base + "?uses=two", "GOOD-0002\n", csvHdr, 400, "bad_codes"},
				{"expiry not a time", base + "?expiresAt=tomorrow", "GOOD-0003\n", csvHdr, 400, "bad_codes"},
				{"another type", base, "count=1", map[string]string{"Authorization": adminAuth["Authorization"], "Content-Type": "application/x-www-form-urlencoded"}, 415, "unsupported_media_type"},
				{"text/plain", base, "GOOD-0006\n", map[string]string{"Authorization": adminAuth["Authorization"], "Content-Type": "text/plain"}, 415, "unsupported_media_type"},
				{"bad room", "/api/admin/rooms/Bad_Room/codes", `{"count":1}`, adminAuth, 400, "bad_room"},
				{"a room that does not exist", "/api/admin/rooms/no-such-room-x/codes", `{"count":1}`, adminAuth, 404, "room_not_found"},
				{"an upload to a room that does not exist", "/api/admin/rooms/no-such-room-x/codes", "GOOD-0004\n", csvHdr, 404, "room_not_found"},
				{"zero uses", base, `{"count":1,"uses":0}`, adminAuth, 400, "bad_codes"},
				{"an unknown query parameter", base + "?usess=5", "GOOD-0005\n", csvHdr, 400, "bad_codes"},
			} {
				r := h.do(t, "POST", tc.path, tc.body, tc.hdr, nil)
				var e struct{ Error, Message string }
				r.json(t, &e)
				if r.status != tc.status || e.Error != tc.code || e.Message == "" {
					t.Errorf("%s: %d %s, want %d %s", tc.name, r.status, r.body, tc.status, tc.code)
				}
			}
			h.do(t, "GET", base, "", adminAuth, nil).json(t, &counts)
			if len(counts.Lines) != 2 || counts.Lines[0].Codes != 2 || counts.Lines[1].Codes != 3 {
				t.Fatalf("refused requests added codes: %+v", counts.Lines)
			}
			// A leaked code is revoked: it lets nobody in any more.
			revoke := base + "/revoke"
			for _, tc := range []struct {
				name, body string
				status     int
				code       string
			}{
				{"by its text", `{"code":"` + strings.ToLower(gen.Codes[2]) + `"}`, 200, ""},
				{"again", `{"code":"` + gen.Codes[2] + `"}`, 404, "code_not_found"},
				{"neither text nor id", `{}`, 400, "bad_codes"},
				{"both", `{"code":"` + gen.Codes[1] + `","id":1}`, 400, "bad_codes"},
				{"an empty batch", `{"codes":[]}`, 400, "bad_codes"},
				{"a batch and a code", `{"codes":["x"],"code":"y"}`, 400, "bad_codes"},
				{"a batch", `{"codes":["` + gen.Codes[0] + `","NOT-A-CODE-OF-OURS"]}`, 200, ""},
				{"the most codes a batch takes, each as long as a code may be", longBatch(console.MaxRevokeBatch), 200, ""},
				{"one more", longBatch(console.MaxRevokeBatch + 1), 400, "bad_codes"},
			} {
				r := h.do(t, "POST", revoke, tc.body, adminAuth, nil)
				var e struct{ Error string }
				r.json(t, &e)
				if r.status != tc.status || e.Error != tc.code {
					t.Errorf("revoke %s: %d %s, want %d %s", tc.name, r.status, r.body, tc.status, tc.code)
				}
			}
			for _, c := range gen.Codes[:3:3] {
				if c == gen.Codes[1] {
					continue // kept for the room made again
				}
				if _, err := codes.Redeem(context.Background(), h.room, c, "v3"); !errors.Is(err, access.ErrUnknown) {
					t.Fatalf("a revoked code: %v, want unknown", err)
				}
			}
			batch := h.do(t, "POST", revoke, `{"codes":["`+gen.Codes[0]+`","NOT-A-CODE-OF-OURS"]}`, adminAuth, nil)
			if batch.status != 200 || !strings.Contains(batch.body, `"revoked":[]`) || !strings.Contains(batch.body, `"unknown":["`+gen.Codes[0]+`","NOT-A-CODE-OF-OURS"]`) {
				t.Fatalf("the batch again: %d %s", batch.status, batch.body)
			}
			// A deleted room's codes go with it: made again, the room has
			// none, and its old codes let nobody in.
			if r := h.do(t, "DELETE", "/api/admin/rooms/"+h.room, "", adminAuth, nil); r.status != 200 {
				t.Fatalf("delete the room: %d %s", r.status, r.body)
			}
			if r := h.do(t, "GET", base, "", adminAuth, nil); r.status != 404 || !strings.Contains(r.body, "room_not_found") {
				t.Fatalf("a deleted room's codes: %d %s", r.status, r.body)
			}
			if r := h.do(t, "PUT", "/api/admin/rooms/"+h.room, `{"rate":5}`, adminAuth, nil); r.status != 201 {
				t.Fatalf("make the room again: %d %s", r.status, r.body)
			}
			h.do(t, "GET", base, "", adminAuth, nil).json(t, &counts)
			if _, err := codes.Redeem(context.Background(), h.room, gen.Codes[1], "v2"); len(counts.Lines) != 0 || !errors.Is(err, access.ErrUnknown) {
				t.Fatalf("the room made again has codes %+v; an old code: %v", counts.Lines, err)
			}
		})
	}
}

// TestCodesAdminAPIOff: without an order database the codes' API says so.
func TestCodesAdminAPIOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	r := h.do(t, "GET", "/api/admin/rooms/"+h.room+"/codes", "", adminAuth, nil)
	if r.status != 404 || !strings.Contains(r.body, "codes_off") {
		t.Fatalf("codes without a database: %d %s", r.status, r.body)
	}
}

// longBatch is a revoke's body of n codes of 64 characters, none of them
// made.
func longBatch(n int) string {
	codes := make([]string, n)
	for i := range codes {
		codes[i] = fmt.Sprintf("%064d", i)
	}
	b, _ := json.Marshal(map[string][]string{"codes": codes})
	return string(b)
}
