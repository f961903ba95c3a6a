package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Image is an uploaded image as the database keeps it: named by the
// SHA-256 of its bytes (hex), with the type sniffed from them.
type Image struct {
	SHA256      string `db:"sha256"`
	ContentType string `db:"content_type"`
	Width       int    `db:"width"`
	Height      int    `db:"height"`
	Data        []byte `db:"data"`
	CreatedBy   string `db:"created_by"`
}

// ErrNoImage is an image the database does not hold.
var ErrNoImage = errors.New("store: no such image")

// PutImage keeps img. The same bytes uploaded again keep the first row:
// its name is its content, so there is nothing to update.
func (db *DB) PutImage(ctx context.Context, img Image) error {
	_, err := db.ExecContext(ctx, db.Rebind(`INSERT INTO images (sha256, content_type, width, height, data, created_by)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING`),
		img.SHA256, img.ContentType, img.Width, img.Height, img.Data, img.CreatedBy)
	if err != nil {
		return fmt.Errorf("store: put image %s: %w", img.SHA256, err)
	}
	return nil
}

// Image returns the image whose SHA-256 is sumHex, or ErrNoImage.
func (db *DB) Image(ctx context.Context, sumHex string) (Image, error) {
	var img Image
	err := db.GetContext(ctx, &img, db.Rebind(`SELECT sha256, content_type, width, height, data, created_by FROM images WHERE sha256 = ?`), sumHex)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Image{}, ErrNoImage
	case err != nil:
		return Image{}, fmt.Errorf("store: get image %s: %w", sumHex, err)
	}
	return img, nil
}
