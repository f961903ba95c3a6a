package web

import (
	"strings"
	"testing"
	"time"

	"waitingroom/server/room"
	"waitingroom/views"
)

// TestOGCard: the opening time is said in Korean time on a Korean card and
// in UTC on an English one, as to come or as past; the card falls back to
// the room's name and the default accent.
func TestOGCard(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 12, 1, 11, 0, 0, 0, time.UTC) // a Sunday; 20:00 in Seoul
	tests := []struct {
		name string
		lang string
		now  time.Time
		at   *time.Time
		want string
	}{
		{"Korean, to come", "ko", at.Add(-time.Hour), &at, "2030년 12월 1일 (일) 20:00 KST 판매 시작"},
		{"Korean, past", "ko", at.Add(time.Hour), &at, "2030년 12월 1일 (일) 20:00 KST부터 판매 중"},
		{"English, to come", "en", at.Add(-time.Hour), &at, "Sale opens Sun 1 Dec 2030, 11:00 UTC"},
		{"English, past", "en", at, &at, "On sale since Sun 1 Dec 2030, 11:00 UTC"},
		{"no opening time", "en", at, nil, ""},
	}
	for _, tt := range tests {
		set := room.Defaults("drop")
		set.Title, set.OpensAt = "", tt.at
		c := newOGCard("drop", faceOf(set, tt.now), views.For(tt.lang), tt.now)
		if c.When != tt.want || c.Title != "drop" || c.Accent != room.Light.Default {
			t.Errorf("%s: %+v, want When %q", tt.name, c, tt.want)
		}
	}
	a := ogCard{Title: "a", Shop: "b"}
	b := ogCard{Title: "ab", Shop: ""}
	if a.fingerprint("f") == b.fingerprint("f") || a.fingerprint("f") == a.fingerprint("g") {
		t.Error("fingerprints collide across fields or fonts")
	}
}

// TestOGImageBounded: the longest title, without a space to break at,
// draws (its time is logged; the benchmarks measure it).
func TestOGImageBounded(t *testing.T) {
	t.Parallel()
	f := cjkFont(t)
	start := time.Now()
	c := ogCard{Title: strings.Repeat("한", room.MaxTitleLen), Shop: strings.Repeat("숍", room.MaxShopNameLen),
		When: strings.Repeat("x", 300), Accent: "#2456e8"}
	if _, err := drawOGImage(c, f); err != nil {
		t.Fatal(err)
	}
	t.Logf("the longest card drew in %v (the font loaded first)", time.Since(start))
}
