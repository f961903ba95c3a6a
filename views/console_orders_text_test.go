package views

import (
	"testing"
	"time"
)

func TestConsoleTime(t *testing.T) {
	at := time.Date(2026, 11, 27, 1, 2, 3, 0, time.UTC)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no zone database:", err)
	}
	for _, tt := range []struct {
		loc        *time.Location
		lang, want string
	}{
		{time.FixedZone("KST", 9*3600), "en", "27 Nov 2026, 10:02:03 (UTC+09:00)"},
		{time.FixedZone("KST", 9*3600), "ko", "2026. 11. 27. 10:02:03 (UTC+09:00)"},
		{time.UTC, "en", "27 Nov 2026, 01:02:03 (UTC)"},
		{ny, "en", "26 Nov 2026, 20:02:03 (UTC-05:00)"},
		{time.FixedZone("IST", 5*3600+1800), "ko", "2026. 11. 27. 06:32:03 (UTC+05:30)"},
	} {
		if got := ConsoleTime(at, tt.loc, tt.lang); got != tt.want {
			t.Errorf("%s %s: %q, want %q", tt.loc, tt.lang, got, tt.want)
		}
	}
}

// TestOrdersTextSaysTheTitleInEachLanguage: the orders page's title is
// its own words in Korean and in English (that every text is there is
// TestTextCatalogues').
func TestOrdersTextSaysTheTitleInEachLanguage(t *testing.T) {
	if OrdersTextFor("ko").OrdersTitle == OrdersTextFor("en").OrdersTitle {
		t.Error("the Korean texts are the English ones")
	}
}
