package share_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"waitingroom/server/share"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
)

// TestCreateAtTheCap: creates racing for a room's last free link leave
// the room with MaxPerRoom links exactly; the others are ErrTooMany.
func TestCreateAtTheCap(t *testing.T) {
	for _, tc := range []struct {
		dialect string
		racers  int
	}{
		{store.Postgres, 20},
		{store.SQLite, 20},
	} {
		t.Run(tc.dialect, func(t *testing.T) {
			db := storetest.Migrated(t, tc.dialect)
			if tc.dialect == store.Postgres {
				db.SetMaxOpenConns(tc.racers) // the racers' statements at once
			}
			ctx := context.Background()
			for round := range 3 {
				room := fmt.Sprintf("capped-%d", round)
				tx := db.MustBegin()
				for i := range share.MaxPerRoom - 1 {
					tx.MustExec(db.Rebind(`INSERT INTO share_links (code, room, utm_source, utm_medium, utm_campaign, utm_content, utm_term, clicks, created_by, created_at)
						VALUES (?, ?, '', '', '', '', '', 0, 'test', CURRENT_TIMESTAMP)`), fmt.Sprintf("f%d%06d", round, i), room)
				}
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
				st := share.NewStore(db)
				var wg sync.WaitGroup
				var mu sync.Mutex
				created, full := 0, 0
				for range tc.racers {
					wg.Go(func() {
						_, err := st.Create(ctx, share.Link{Room: room, Source: "kakao"})
						mu.Lock()
						defer mu.Unlock()
						switch {
						case err == nil:
							created++
						case errors.Is(err, share.ErrTooMany):
							full++
						default:
							t.Error(err)
						}
					})
				}
				wg.Wait()
				var n int
				if err := db.GetContext(ctx, &n, db.Rebind(`SELECT COUNT(*) FROM share_links WHERE room = ?`), room); err != nil {
					t.Fatal(err)
				}
				if n != share.MaxPerRoom || created != 1 || full != tc.racers-1 {
					t.Fatalf("%d links, %d created, %d refused; want %d, 1, %d", n, created, full, share.MaxPerRoom, tc.racers-1)
				}
			}
		})
	}
}
