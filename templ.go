//go:generate go tool templ generate

// Command waitingroom serves a virtual waiting room in front of an order API.
//
// This file holds what the binary embeds: the static assets and the SQL
// migrations.
package main

import "embed"

// staticFS holds the page's assets, served under fingerprinted URLs.
//
//go:embed static
var staticFS embed.FS

// migrationsFS holds the SQL migrations that goose applies at startup.
//
//go:embed migrations
var migrationsFS embed.FS
