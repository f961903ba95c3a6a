package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jmoiron/sqlx"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// putImage stores a PNG logo in the database of the server t's test
// started, once its migrations have run, and returns its path.
func putImage(t *testing.T) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 120, 40))
	for x := range 120 {
		for y := range 40 {
			img.Set(x, y, color.RGBA{0x1a, 0x4f, 0xd0, 0xff})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	db, err := sqlx.Open("postgres", orderDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err = db.Exec(`INSERT INTO images (sha256, content_type, width, height, data) VALUES ($1, 'image/png', 120, 40, $2)`,
			hex.EncodeToString(sum[:]), buf.Bytes())
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // migrations still running
	}
	if err != nil {
		t.Fatal(err)
	}
	return room.MediaPath(hex.EncodeToString(sum[:]), "png")
}

// TestBrowserBrandedRoom: a branded room's page shows its logo, and its
// accent colours are the page's in the light and the dark scheme (the
// room's stylesheet passes the CSP), with no accessibility violation.
func TestBrowserBrandedRoom(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	t.Parallel()
	axe := axeSource(t)
	alloc := browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond, "-admin-token", consoleToken)
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Title, set.ShopURL = "봄 세일", "https://shop.example/"
	set.Branding = room.Branding{Logo: putImage(t), AccentColor: "#1a4fd0", AccentColorDark: "#8fb0ff",
		ShopName: "Kim's Shop", Description: "Spring sale: 100 pairs only."}
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	for _, sc := range []struct{ scheme, accent, label string }{
		{"light", "rgb(26, 79, 208)", "rgb(255, 255, 255)"},
		{"dark", "rgb(143, 176, 255)", "rgb(11, 16, 32)"},
	} {
		t.Run(sc.scheme, func(t *testing.T) {
			tab := stateTab(t, alloc, "en", sc.scheme)
			if err := chromedp.Do(tab, chromedp.Navigate(base+"/r/"+name)); err != nil {
				t.Fatal(err)
			}
			logo := `(function () { var i = document.querySelector("img.brand-logo"); return !!i && i.complete && i.naturalWidth === 120 && i.alt === ""; })()`
			if _, err := chromedp.Run(tab, chromedp.Poll[chromedp.Void](logo, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
				t.Fatalf("the logo did not show: %v", err)
			}
			got, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`[
				getComputedStyle(document.querySelector(".brand a")).color,
				getComputedStyle(document.querySelector("#wr-join button")).backgroundColor,
				getComputedStyle(document.querySelector("#wr-join button")).color]`))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 3 || got[0] != sc.accent || got[1] != sc.accent || got[2] != sc.label {
				t.Fatalf("%s scheme: link, button and label colours %v, want %s on the accent %s", sc.scheme, got, sc.label, sc.accent)
			}
			axeCheck(t, tab, axe, "branded room, "+sc.scheme)
		})
	}
	// The console's branding page, and its refusal of a colour that
	// lacks contrast, said next to the field.
	t.Run("console", func(t *testing.T) {
		op := stateTab(t, alloc, "ko", "light")
		signInConsole(t, op, base)
		openPage(t, op, base+"/admin/rooms/"+name+"/branding")
		axeCheck(t, op, axe, "branding page")
		// The colour picker follows the typed colour, and the other way.
		setValues(t, op, "branding", [][2]string{{"#f-accentColorDark", "#8FB0FF"}})
		picked, err := chromedp.Run(op, chromedp.Evaluate[string](`(function () {
			var p = document.getElementById("pick-accentColorDark"), before = p.hidden + " " + p.value;
			p.value = "#aabbcc"; p.dispatchEvent(new Event("input", {bubbles: true}));
			return before + " " + document.getElementById("f-accentColorDark").value; })()`))
		if err != nil || picked != "false #8fb0ff #aabbcc" {
			t.Fatalf("the colour picker: %q %v", picked, err)
		}
		setValues(t, op, "branding", [][2]string{{"#f-accentColor", "#ffff00"}})
		resp, err := chromedp.RunResponse(op, chromedp.Evaluate[chromedp.Void](`document.querySelector("form.room-form button[type=submit]").click()`))
		if err != nil || resp.Status != 422 {
			t.Fatalf("a refused colour: %v %v", resp, err)
		}
		msg, err := chromedp.Run(op, chromedp.Evaluate[string](`document.getElementById("err-accentColor").textContent + "|" + document.getElementById("f-accentColor").value`))
		if err != nil || !strings.Contains(msg, "WCAG AA") || !strings.HasSuffix(msg, "|#ffff00") {
			t.Fatalf("the refusal reads %q (%v)", msg, err)
		}
		axeCheck(t, op, axe, "branding page, refused")
	})
}
