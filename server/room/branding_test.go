package room

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestContrast(t *testing.T) {
	tests := []struct {
		a, b string
		want float64
	}{
		{"#000000", "#ffffff", 21},
		{"#ffffff", "#ffffff", 1},
		{"#777777", "#ffffff", 4.48}, // the classic just-fails grey
		{"#2456e8", "#ffffff", 5.88},
		{"#zzzzzz", "#ffffff", 0},
	}
	for _, tt := range tests {
		if got := Contrast(tt.a, tt.b); math.Abs(got-tt.want) > 0.01 {
			t.Errorf("Contrast(%s, %s) = %.3f, want %.2f", tt.a, tt.b, got, tt.want)
		}
		if got, back := Contrast(tt.a, tt.b), Contrast(tt.b, tt.a); got != back {
			t.Errorf("Contrast(%s, %s) = %v but the other way %v", tt.a, tt.b, got, back)
		}
	}
}

func TestCheckAccent(t *testing.T) {
	tests := []struct {
		name   string
		colour string
		scheme Scheme
		ok     bool
		bg     string // the background named in the refusal
	}{
		{"none", "", Light, true, ""},
		{"the built-in light accent", Light.Default, Light, true, ""},
		{"the built-in dark accent", Dark.Default, Dark, true, ""},
		{"a dark brand blue in light", "#1a4fd0", Light, true, ""},
		{"upper case", "#1A4FD0", Light, true, ""},
		{"yellow links vanish on white", "#ffd400", Light, false, "#f6f7f9"},
		{"a mid grey fails by a hair", "#777777", Light, false, "#f6f7f9"},
		{"a light-scheme blue is too dark in the dark scheme", "#1a4fd0", Dark, false, "#101216"},
		{"a pale pink in the dark scheme", "#ffb3c7", Dark, true, ""},
		{"not a colour", "blue", Light, false, ""},
		{"three digits", "#abc", Light, false, ""},
		{"css injection", "#123456;background:url(x)", Light, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckAccent(tt.colour, tt.scheme)
			if (err == nil) != tt.ok {
				t.Fatalf("CheckAccent(%q, %s) = %v, want ok %v", tt.colour, tt.scheme.Name, err, tt.ok)
			}
			var ce *ContrastError
			if tt.bg != "" && (!errors.As(err, &ce) || ce.Background != tt.bg || ce.Ratio >= ce.Min) {
				t.Fatalf("CheckAccent(%q) = %v, want a contrast error on %s", tt.colour, err, tt.bg)
			}
			if err == nil && tt.colour != "" {
				// What passes keeps AA everywhere it is used.
				for _, bg := range tt.scheme.Backgrounds {
					if r := Contrast(strings.ToLower(tt.colour), bg); r < MinContrast {
						t.Fatalf("passed with %.2f:1 on %s", r, bg)
					}
				}
				if r := Contrast(OnAccent(strings.ToLower(tt.colour), tt.scheme), strings.ToLower(tt.colour)); r < MinContrast {
					t.Fatalf("passed with a label at %.2f:1", r)
				}
			}
		})
	}
}

func TestValidOrigin(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"https://shop.example", true},
		{"http://127.0.0.1:8081", true},
		{"https://shop.example:8443", true},
		{"https://shop.example/", false},
		{"https://shop.example/landing", false},
		{"https://SHOP.example", false},
		{"https://*.shop.example", false},
		{"https://shop.example?x=1", false},
		{"https://user@shop.example", false},
		{"javascript:alert(1)", false},
		{"ftp://shop.example", false},
		{"https://a.example https://b.example", false},
		{"https://a.example;script-src *", false},
		{"'self'", false},
		{"", false},
		{"https://[::1]:8443", true},
		{"http://localhost:3000", true},
		{"https://xn--bcher-kva.example", true},
		{"https://shop.example:", false},      // an empty port
		{"https://shop.example:99999", false}, // no such port
		{"https://shop.example:0", false},
		{"https://shop.example:080", false},
		{"https://bücher.example", false}, // CSP needs the xn-- form
		{"https://a<b>.example", false},
		{"https://a$b&c.example", false},
		{"https://-shop.example", false},
		{"https://shop..example", false},
		{"https://[fe80::1%25eth0]", false},
	}
	for _, tt := range tests {
		if got := ValidOrigin(tt.in); got != tt.want {
			t.Errorf("ValidOrigin(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestBrandingValidate(t *testing.T) {
	img := MediaPath(strings.Repeat("ab", 32), "png")
	tests := []struct {
		name    string
		b       Branding
		wantErr string
	}{
		{"empty", Branding{}, ""},
		{"full", Branding{Logo: img, OGImage: img, Favicon: MediaPath(strings.Repeat("0", 64), "ico"), AccentColor: "#1a4fd0",
			AccentColorDark: "#ffb3c7", Description: "한정 수량 드롭", DefaultLanguage: "ko", ShopName: "Shop",
			EmbedOrigins: []string{"https://shop.example"}, EmbedTarget: EmbedSameTab, Listed: true}, ""},
		{"an outside logo", Branding{Logo: "https://evil.example/x.png"}, "logo"},
		{"an svg logo", Branding{Logo: "/media/" + strings.Repeat("ab", 32) + ".svg"}, "logo"},
		{"a path through", Branding{Favicon: "/media/../admin.png"}, "favicon"},
		{"a long description", Branding{Description: strings.Repeat("가", MaxDescriptionLen+1)}, "description"},
		{"a control character", Branding{ShopName: "a\u202eb"}, "shopName"},
		{"a third language", Branding{DefaultLanguage: "ja"}, "defaultLanguage"},
		{"a frame name", Branding{EmbedTarget: "_parent"}, "embedTarget"},
		{"a bad origin", Branding{EmbedOrigins: []string{"https://ok.example", "*"}}, "embedOrigins"},
		{"too many origins", Branding{EmbedOrigins: make([]string, MaxEmbedOrigins+1)}, "embedOrigins"},
		{"a pale light accent", Branding{AccentColor: "#ffd400"}, "accentColor"},
		{"a dark dark accent", Branding{AccentColorDark: "#1a4fd0"}, "accentColorDark"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.b.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("Validate = %v, want an error naming %s", err, tt.wantErr)
			}
		})
	}
}

func TestBrandingPatch(t *testing.T) {
	origins := []string{"https://shop.example"}
	colour, lang := "#1A4FD0", "ko"
	got := Patch{BrandingPatch: BrandingPatch{AccentColor: &colour, DefaultLanguage: &lang, EmbedOrigins: &origins}}.Apply(Defaults("r"))
	if got.AccentColor != "#1a4fd0" || got.DefaultLanguage != "ko" || len(got.EmbedOrigins) != 1 || got.Title != "r" {
		t.Fatalf("Apply = %+v", got.Branding)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestNearestAccent: a refused brand colour comes with the nearest shade
// that passes, of the same hue, and that shade does pass.
func TestNearestAccent(t *testing.T) {
	tests := []struct {
		colour string
		scheme Scheme
		darker bool // the suggestion is darker than the colour
	}{
		{"#e60012", Light, true}, // a brand red at 4.47:1
		{"#ffd400", Light, true}, // a brand yellow
		{"#1a4fd0", Dark, false}, // a light-scheme blue in the dark scheme
		{"#0a1f44", Dark, false}, // navy in the dark scheme
		{"#777777", Light, true}, // the classic grey
	}
	for _, tt := range tests {
		var ce *ContrastError
		if err := CheckAccent(tt.colour, tt.scheme); !errors.As(err, &ce) {
			t.Fatalf("CheckAccent(%s, %s) = %v, want a contrast error", tt.colour, tt.scheme.Name, err)
		}
		if ce.Suggestion == "" || CheckAccent(ce.Suggestion, tt.scheme) != nil {
			t.Fatalf("%s in %s: suggestion %q does not pass", tt.colour, tt.scheme.Name, ce.Suggestion)
		}
		l1, _ := luminance(tt.colour)
		l2, _ := luminance(ce.Suggestion)
		if (l2 < l1) != tt.darker {
			t.Errorf("%s in %s: suggestion %s goes the wrong way", tt.colour, tt.scheme.Name, ce.Suggestion)
		}
		if !strings.Contains(ce.Error(), ce.Suggestion) {
			t.Errorf("the message does not name the suggestion: %v", ce)
		}
	}
}
