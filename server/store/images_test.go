package store_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
)

func TestImages(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			db := storetest.Migrated(t, dialect)
			ctx := context.Background()
			img := store.Image{SHA256: "ab", ContentType: "image/png", Width: 3, Height: 2, Data: []byte{0, 1, 2, 0xff}, CreatedBy: "ann"}
			for range 2 { // a second upload of the same bytes is no error
				if err := db.PutImage(ctx, img); err != nil {
					t.Fatal(err)
				}
			}
			got, err := db.Image(ctx, "ab")
			if err != nil || got.ContentType != img.ContentType || got.Width != 3 || got.Height != 2 || !bytes.Equal(got.Data, img.Data) || got.CreatedBy != "ann" {
				t.Fatalf("image %+v %v", got, err)
			}
			if _, err := db.Image(ctx, "cd"); !errors.Is(err, store.ErrNoImage) {
				t.Fatalf("missing image: %v", err)
			}
		})
	}
}
