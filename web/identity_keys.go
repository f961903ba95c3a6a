package web

import (
	"sync"

	"waitingroom/server/identity"
)

// pastedKeys keeps the parsed keys of the rooms' pasted key texts, so
// that a join in a room that takes identities does not parse PEM or JSON
// again. An edited room's text is a new entry; past maxPastedKeys texts
// the cache starts afresh (a room's keys parse again on its next join).
type pastedKeys struct {
	mu     sync.Mutex
	byText map[string]identity.Static
}

const maxPastedKeys = 256

// parse returns the keys of text (identity.ParseKeys), parsed once.
func (c *pastedKeys) parse(text string) (identity.Static, error) {
	c.mu.Lock()
	keys, ok := c.byText[text]
	c.mu.Unlock()
	if ok {
		return keys, nil
	}
	keys, err := identity.ParseKeys(text)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byText == nil || len(c.byText) >= maxPastedKeys {
		c.byText = make(map[string]identity.Static)
	}
	c.byText[text] = keys
	return keys, nil
}
