package views

import (
	"reflect"
	"regexp"
	"testing"
)

// TestRoomsTextIsComplete: every text of the rooms pages exists in both
// languages, with the same placeholders and the same map keys.
func TestRoomsTextIsComplete(t *testing.T) {
	ko, en := reflect.ValueOf(RoomsTextFor("ko")), reflect.ValueOf(RoomsTextFor("en"))
	placeholders := regexp.MustCompile(`\{[a-z]+\}`)
	for i := range ko.NumField() {
		name := ko.Type().Field(i).Name
		switch k, e := ko.Field(i), en.Field(i); k.Kind() {
		case reflect.String:
			if k.String() == "" || e.String() == "" {
				t.Errorf("%s is missing in a language", name)
			}
			if pk, pe := placeholders.FindAllString(k.String(), -1), placeholders.FindAllString(e.String(), -1); !reflect.DeepEqual(pk, pe) {
				t.Errorf("%s: placeholders %v in Korean, %v in English", name, pk, pe)
			}
		case reflect.Map:
			if k.Len() == 0 || k.Len() != e.Len() {
				t.Errorf("%s: %d Korean, %d English entries", name, k.Len(), e.Len())
			}
			for _, key := range k.MapKeys() {
				if v := e.MapIndex(key); !v.IsValid() || v.String() == "" || k.MapIndex(key).String() == "" {
					t.Errorf("%s[%s] is missing in a language", name, key)
				}
			}
		}
	}
	if RoomsTextFor("fr").Lang != "en" {
		t.Error("an unknown language is not English")
	}
}
