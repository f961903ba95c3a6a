package salelog

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// TestEventsListsEveryEvent: every constant of type Event declared in the
// package is in Events (which the views' labels are checked against), and
// each names its own audit action.
func TestEventsListsEveryEvent(t *testing.T) {
	fs := token.NewFileSet()
	pkgs, err := parser.ParseDir(fs, ".", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, f := range pkgs["salelog"].Files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Event" {
					for _, n := range v.Names {
						declared = append(declared, n.Name)
					}
				}
			}
		}
	}
	if len(declared) < 11 {
		t.Fatalf("found only %v", declared)
	}
	if len(declared) != len(Events) {
		t.Errorf("%d Event constants declared (%v), %d in Events", len(declared), declared, len(Events))
	}
	var actions []string
	for _, ev := range Events {
		a := Action(ev)
		if slices.Contains(actions, a) {
			t.Errorf("two events are recorded as %s", a)
		}
		actions = append(actions, a)
	}
}
