// Package views holds the templ components of the waiting room's pages and
// their Korean and English texts.
package views

import (
	"strconv"
	"strings"
)

// Messages are a page's texts in one language. Strings with {n}, {t},
// {title} or {m}/{s} are filled in by the server or by app.js.
type Messages struct {
	Lang          string
	WaitingRoom   string
	Intro         string
	KeepOpen      string
	Ahead         string // {n}
	AheadOne      string
	Next          string
	InLine        string // {n}
	ETA           string // {t}
	Minutes       string // {m}
	Seconds       string // {s}
	Connecting    string
	Reconnecting  string
	Polling       string
	Ready         string
	ReadyHint     string
	OrderButton   string
	Quantity      string
	Join          string
	NotInLine     string
	NoScript      string
	Description   string // {title}
	StatusTitle   string
	ErrorTitle    string
	Retry         string
	BackToRoom    string
	ProgressLabel string

	SoldOut        string
	Product        string
	Price          string
	OrderPlaced    string
	OrderNumber    string // {id}
	OrderSummary   string // {n}, {name}
	ErrTokenGone   string
	ErrTokenUsed   string
	ErrTokenInUse  string
	ErrSoldOut     string
	ErrRateLimited string // {s}
	ErrTokenPaused string // {s}
	ErrUnavailable string
	ErrBadOrder    string
	// ErrCrossSite refuses a form that another site posted.
	ErrCrossSite string

	// ABSENCE (issue 10): paused, and why a rank went up (RankUp* reasons).
	Paused         string
	RankUpReturned string
	RankUpRecount  string
}

var english = Messages{
	Lang:          "en",
	WaitingRoom:   "Waiting room",
	Intro:         "Lots of people are here right now. You are in a fair, first-come line, and this page updates by itself.",
	KeepOpen:      "Keep this page open: you will keep your place.",
	Ahead:         "{n} people ahead of you",
	AheadOne:      "1 person ahead of you",
	Next:          "You are next",
	InLine:        "{n} in line",
	ETA:           "Estimated wait: {t}",
	Minutes:       "{m} min",
	Seconds:       "{s} s",
	Connecting:    "Connecting…",
	Reconnecting:  "Reconnecting…",
	Polling:       "Live updates are unavailable; checking every few seconds.",
	Ready:         "It is your turn!",
	ReadyHint:     "Your entry pass is valid for a few minutes.",
	OrderButton:   "Continue to order",
	Quantity:      "Quantity",
	Join:          "Join the line",
	NotInLine:     "You are not in the line.",
	NoScript:      "JavaScript is off: join the line, and the status page will refresh by itself.",
	Description:   "Join the line for {title}.",
	StatusTitle:   "Your place in line",
	ErrorTitle:    "Something went wrong",
	Retry:         "Try again",
	BackToRoom:    "Back to the waiting room",
	ProgressLabel: "Progress through the line",

	SoldOut:        "Sold out: everything has been sold. Thank you for waiting.",
	Product:        "Product",
	Price:          "Price",
	OrderPlaced:    "Your order is placed",
	OrderNumber:    "Order number {id}",
	OrderSummary:   "{n} × {name}",
	ErrTokenGone:   "Your entry pass is not valid, or it has expired. Please join the line again.",
	ErrTokenUsed:   "This entry pass has already been used for an order.",
	ErrTokenInUse:  "Your order is already being processed. Wait a moment, then retry.",
	ErrSoldOut:     "Sorry, that is sold out. Your entry pass is still valid: you can choose something else.",
	ErrRateLimited: "Many orders are arriving right now. Please retry in {s} seconds; your entry pass is still valid.",
	ErrTokenPaused: "Too many order attempts with this entry pass failed. Please check the product and the quantity, and retry in {s} seconds; your entry pass is still valid.",
	ErrUnavailable: "We could not take your order right now. Your entry pass is still valid: please retry in a moment.",
	ErrBadOrder:    "The order form was not valid. Please check the product and the quantity.",
	ErrCrossSite:   "This form was sent from another website, so it was refused. Your place in line and your entry pass are unchanged: open the waiting room itself to continue.",

	Paused:         "Admission is paused for now. You keep your place; the wait starts again when admission resumes.",
	RankUpReturned: "You were away longer than your place is kept, so you joined the line again at the end.",
	RankUpRecount:  "The line was recounted, and more people are ahead of you than shown before.",
}

var korean = Messages{
	Lang:          "ko",
	WaitingRoom:   "대기실",
	Intro:         "지금 접속자가 많습니다. 선착순 대기열에 계시며, 이 페이지는 자동으로 갱신됩니다.",
	KeepOpen:      "이 페이지를 열어 두시면 순서가 유지됩니다.",
	Ahead:         "내 앞에 {n}명이 있습니다",
	AheadOne:      "내 앞에 1명이 있습니다",
	Next:          "곧 입장합니다",
	InLine:        "대기 {n}명",
	ETA:           "예상 대기 시간: {t}",
	Minutes:       "{m}분",
	Seconds:       "{s}초",
	Connecting:    "연결 중…",
	Reconnecting:  "다시 연결 중…",
	Polling:       "실시간 연결을 사용할 수 없어 몇 초마다 확인합니다.",
	Ready:         "입장 차례입니다!",
	ReadyHint:     "입장권은 몇 분 동안 유효합니다.",
	OrderButton:   "주문하기",
	Quantity:      "수량",
	Join:          "줄 서기",
	NotInLine:     "대기열에 있지 않습니다.",
	NoScript:      "자바스크립트가 꺼져 있습니다. 줄을 서시면 상태 페이지가 자동으로 갱신됩니다.",
	Description:   "{title} 대기열에 참여하세요.",
	StatusTitle:   "나의 대기 순서",
	ErrorTitle:    "문제가 발생했습니다",
	Retry:         "다시 시도",
	BackToRoom:    "대기실로 돌아가기",
	ProgressLabel: "대기열 진행률",

	SoldOut:        "품절되었습니다. 기다려 주셔서 감사합니다.",
	Product:        "상품",
	Price:          "가격",
	OrderPlaced:    "주문이 완료되었습니다",
	OrderNumber:    "주문 번호 {id}",
	OrderSummary:   "{name} × {n}",
	ErrTokenGone:   "입장권이 유효하지 않거나 만료되었습니다. 다시 줄을 서 주세요.",
	ErrTokenUsed:   "이 입장권으로 이미 주문하셨습니다.",
	ErrTokenInUse:  "주문을 처리하고 있습니다. 잠시 후 다시 시도해 주세요.",
	ErrSoldOut:     "죄송합니다. 해당 상품이 품절되었습니다. 입장권은 아직 유효하니 다른 상품을 선택하실 수 있습니다.",
	ErrRateLimited: "지금 주문이 몰리고 있습니다. {s}초 후 다시 시도해 주세요. 입장권은 아직 유효합니다.",
	ErrTokenPaused: "이 입장권으로 실패한 주문 시도가 너무 많습니다. 상품과 수량을 확인하고 {s}초 후 다시 시도해 주세요. 입장권은 아직 유효합니다.",
	ErrUnavailable: "지금은 주문을 받을 수 없습니다. 입장권은 아직 유효하니 잠시 후 다시 시도해 주세요.",
	ErrBadOrder:    "주문 양식이 올바르지 않습니다. 상품과 수량을 확인해 주세요.",
	ErrCrossSite:   "다른 웹사이트에서 보낸 양식이라 거부되었습니다. 대기 순서와 입장권은 그대로입니다. 대기실에서 직접 계속해 주세요.",

	Paused:         "입장이 잠시 중단되었습니다. 순서는 그대로 유지되며, 입장이 다시 시작되면 대기가 이어집니다.",
	RankUpReturned: "자리를 비운 시간이 순서 보관 시간보다 길어, 대기열 맨 뒤에 다시 줄을 섰습니다.",
	RankUpRecount:  "대기열을 다시 집계한 결과, 앞선 인원이 이전 표시보다 많습니다.",
}

// For returns the texts of lang ("ko" or "en"); anything else is English.
func For(lang string) Messages {
	if lang == "ko" {
		return korean
	}
	return english
}

// Negotiate picks "ko" or "en" from an Accept-Language header by quality,
// defaulting to English.
func Negotiate(acceptLanguage string) string {
	best, bestQ := "en", -1.0
	if len(acceptLanguage) > 512 {
		acceptLanguage = acceptLanguage[:512]
	}
	for i, part := range strings.Split(acceptLanguage, ",") {
		if i >= 16 {
			break
		}
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1 {
				continue
			}
			q = f
		}
		primary, _, _ := strings.Cut(strings.ToLower(tag), "-")
		if (primary == "ko" || primary == "en") && q > bestQ {
			best, bestQ = primary, q
		}
	}
	return best
}

// Fill replaces {key} with val in s.
func Fill(s, key, val string) string { return strings.ReplaceAll(s, "{"+key+"}", val) }

// Duration formats seconds as the page does: "{m} min {s} s" or "{s} s".
func (m Messages) Duration(seconds int64) string {
	if seconds < 60 {
		return Fill(m.Seconds, "s", strconv.FormatInt(max(seconds, 0), 10))
	}
	out := Fill(m.Minutes, "m", strconv.FormatInt(seconds/60, 10))
	if s := seconds % 60; s > 0 {
		out += " " + Fill(m.Seconds, "s", strconv.FormatInt(s, 10))
	}
	return out
}
