package views

import (
	"reflect"
	"regexp"
	"testing"
)

// catalogues are every text catalogue of the package, each read through
// its XTextFor(lang).
var catalogues = []struct {
	name string
	of   func(lang string) any
}{
	{"Messages", func(l string) any { return For(l) }},
	{"AccessText", func(l string) any { return AccessTextFor(l) }},
	{"AccessFormText", func(l string) any { return AccessFormTextFor(l) }},
	{"BypassText", func(l string) any { return BypassTextFor(l) }},
	{"BrandingText", func(l string) any { return BrandingTextFor(l) }},
	{"CodesText", func(l string) any { return CodesTextFor(l) }},
	{"ConsoleText", func(l string) any { return ConsoleTextFor(l) }},
	{"LinksText", func(l string) any { return LinksTextFor(l) }},
	{"DashText", func(l string) any { return DashTextFor(l) }},
	{"EmbedText", func(l string) any { return EmbedTextFor(l) }},
	{"GateFormText", func(l string) any { return GateFormTextFor(l) }},
	{"GateText", func(l string) any { return GateTextFor(l) }},
	{"OrdersText", func(l string) any { return OrdersTextFor(l) }},
	{"ProxyText", func(l string) any { return ProxyTextFor(l) }},
	{"RoomsText", func(l string) any { return RoomsTextFor(l) }},
	{"ShareText", func(l string) any { return ShareTextFor(l) }},
	{"WaitText", func(l string) any { return WaitTextFor(l) }},
}

// texts returns every string a catalogue holds, by its path: the fields
// of its structs (nested ones too) and the entries of its maps.
func texts(v reflect.Value, path string, out map[string]string) {
	switch v.Kind() {
	case reflect.String:
		out[path] = v.String()
	case reflect.Struct:
		for i := range v.NumField() {
			texts(v.Field(i), path+"."+v.Type().Field(i).Name, out)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			texts(v.MapIndex(k), path+"["+k.String()+"]", out)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			texts(v.Index(i), path+"["+string(rune('0'+i))+"]", out)
		}
	}
}

// TestTextCatalogues: every catalogue has every text in each language,
// none empty, with the same placeholders and map keys in Korean and
// English; the two languages are not the same words; and a language the
// catalogue does not know gets English.
func TestTextCatalogues(t *testing.T) {
	placeholders := regexp.MustCompile(`\{[a-z]+\}`)
	for _, c := range catalogues {
		t.Run(c.name, func(t *testing.T) {
			byLang := map[string]map[string]string{}
			for _, lang := range []string{"ko", "en"} {
				byLang[lang] = map[string]string{}
				texts(reflect.ValueOf(c.of(lang)), c.name, byLang[lang])
				for path, s := range byLang[lang] {
					if s == "" {
						t.Errorf("%s: %s is empty", lang, path)
					}
				}
			}
			ko, en := byLang["ko"], byLang["en"]
			differ := 0
			for path, k := range ko {
				e, ok := en[path]
				if !ok {
					t.Errorf("%s is in Korean, not in English", path)
					continue
				}
				if k != e {
					differ++
				}
				if pk, pe := placeholders.FindAllString(k, -1), placeholders.FindAllString(e, -1); !sameSet(pk, pe) {
					t.Errorf("%s: placeholders %v in Korean, %v in English", path, pk, pe)
				}
			}
			for path := range en {
				if _, ok := ko[path]; !ok {
					t.Errorf("%s is in English, not in Korean", path)
				}
			}
			if differ < len(en)/2 {
				t.Errorf("only %d of %d texts differ between Korean and English", differ, len(en))
			}
			if !reflect.DeepEqual(c.of("fr"), c.of("en")) {
				t.Error("an unknown language is not English")
			}
		})
	}
}

// sameSet reports whether a and b hold the same placeholders, in any
// order and however often.
func sameSet(a, b []string) bool {
	in := func(s string, l []string) bool {
		for _, x := range l {
			if x == s {
				return true
			}
		}
		return false
	}
	for _, s := range a {
		if !in(s, b) {
			return false
		}
	}
	for _, s := range b {
		if !in(s, a) {
			return false
		}
	}
	return true
}
