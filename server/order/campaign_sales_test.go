package order

import (
	"context"
	"reflect"
	"testing"
	"time"

	"waitingroom/server/store"
)

func TestCampaignSales(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil)
			ctx := context.Background()
			krw := e.product(t, e.room, "shoes", 1000, "KRW", 10)
			usd := e.product(t, e.room, "hat", 250, "USD", 10)
			bf := UTM{Source: "instagram", Medium: "social", Campaign: "bf", Term: "ignored"}
			at := time.Now()
			e.insert(t, fixture{id: pid(1), room: e.room, product: krw, visitor: "ann", quantity: 2, unitPrice: 1000, currency: "KRW", utm: bf, at: at})
			e.insert(t, fixture{id: pid(2), room: e.room, product: usd, visitor: "ann", quantity: 1, unitPrice: 250, currency: "USD", utm: bf, at: at})
			e.insert(t, fixture{id: pid(3), room: e.room, product: krw, visitor: "bob", quantity: 1, unitPrice: 900, currency: "KRW", utm: UTM{Source: "instagram", Medium: "social", Campaign: "bf", Content: "x"}, at: at})
			e.insert(t, fixture{id: pid(4), room: e.room, product: krw, visitor: "cid", quantity: 5, unitPrice: 1000, currency: "KRW", utm: bf, status: StatusCancelled, at: at})
			e.insert(t, fixture{id: pid(5), room: e.room, product: krw, visitor: "dan", quantity: 1, unitPrice: 1000, currency: "KRW", at: at})
			e.insert(t, fixture{id: pid(6), room: e.room, product: krw, visitor: "eve", quantity: 1, unitPrice: -1, at: at})
			e.insert(t, fixture{id: pid(7), room: e.room + "-x", product: krw, visitor: "fay", quantity: 1, unitPrice: 1000, currency: "KRW", utm: bf, at: at})
			e.insert(t, fixture{id: pid(8), room: e.room, product: krw, visitor: "gus", quantity: 4, unitPrice: 1000, currency: "KRW", utm: UTM{Source: "naver"}, status: StatusCancelled, at: at})

			got, err := e.svc.CampaignSales(ctx, e.room)
			if err != nil {
				t.Fatal(err)
			}
			want := []CampaignSale{
				{Source: "instagram", Medium: "social", Campaign: "bf", Orders: 3, Buyers: 2, Units: 4,
					Revenue: map[string]int64{"KRW": 2900, "USD": 250}},
				{Orders: 2, Buyers: 2, Units: 2, Revenue: map[string]int64{"KRW": 1000}},
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
			if none, err := e.svc.CampaignSales(ctx, "no-such-room"); err != nil || len(none) != 0 {
				t.Fatalf("a room without orders: %+v %v", none, err)
			}
		})
	}
}
