// Package views holds the templ components of the waiting room's pages and
// their Korean and English texts.
package views

import (
	"strconv"
	"strings"

	"waitingroom/server/room"
)

// Messages are a page's texts in one language. Strings with {n}, {t},
// {title} or {m}/{s} are filled in by the server or by app.js.
type Messages struct {
	Lang        string
	WaitingRoom string
	// Intro is the waiting line's lead; IntroPrequeue the pre-queue's,
	// where places are drawn.
	Intro         string
	IntroPrequeue string
	KeepOpen      string
	Ahead         string // {n}
	AheadOne      string
	Next          string
	// NoneAhead is the place at the front of a paused line, where "you
	// are next" would promise a turn that is not coming yet.
	NoneAhead     string
	InLine        string // {n}
	ETA           string // {t}
	Hours         string // {h}
	Minutes       string // {m}
	Seconds       string // {s}
	Connecting    string
	Reconnecting  string
	Polling       string
	Ready         string
	ReadyHint     string // {t}: the pass's time (WithPass)
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

	SoldOut string
	// SoldOutKeep is sold out said to a buyer who holds a place: a
	// restock lets the line move again.
	SoldOutKeep    string
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

	// The states of a sale: every state a buyer can be in has
	// its own words.
	NotOpen      string
	OpensAt      string // {time}
	LineOpensAt  string // {time}
	OpensIn      string // {t}
	Prequeued    string
	PrequeueHint string
	DrawIn       string // {t}
	// Drawing is said once the opening is due and the draw has not landed.
	Drawing    string
	Ticket     string // {n}
	Paused     string
	PausedHint string
	RankUp     string
	// RankUpReasons explain a rank that went up, by rankUpReason:
	// "returned" (the buyer came back after their return window and
	// joined again at the end) or "recount" (the server recounted the
	// line).
	RankUpReturned  string
	RankUpRecount   string
	PassLeft        string // {t}
	PassWarning     string
	Expired         string
	ExpiredHint     string // {t}: the pass's time (WithPass)
	Rejoin          string
	SoldOutTitle    string
	Ended           string
	EndedHint       string
	TooMany         string
	Trouble         string
	BackToShop      string
	MaxPerBuyer     string // {n}
	ErrOverLimit    string // {n} per buyer, {left} still to order
	ErrLimitReached string // {n} per buyer, all ordered
	ErrFewLeft      string // {n}
	Total           string
	NextSteps       string
	// Error page headings, by what went wrong.
	TitleNotFound   string
	TitleTooMany    string
	TitleTrouble    string
	TitleRefused    string
	TitleNotPlaced  string
	TitleNoSuchPage string
	NoSuchOrder     string
	NoSuchRoom      string
	BadRoomName     string
	FormTooLarge    string
	// FormInvalid answers a form whose body could not be read.
	FormInvalid  string
	TooManyJoins string
	AboutTime    string // {t}
	TroublePage  string
	// NotOpenHint refuses a join before the line opens.
	NotOpenHint string
	// JoinCheck refuses a no-JavaScript join that brought no proof of work
	// in a room that asks one.
	JoinCheck string

	// preview: the default link preview image's opening line ({time}),
	// before and after the opening, and the page at GET /.
	OGOpens   string
	OGOpened  string
	HomeTitle string
	HomeIntro string
	HomeEmpty string
	HomeOpens string // {time}
	// brand: the uploaded images' address (/media/…).
	NoSuchImage string
	// share: a short link (/s/{code}) that does not exist.
	ShareLinkGone string

	// WIDGET: the embeddable widget's texts (/r/{room}/widget) and the
	// console's embed page.
	WidgetPrequeue   string
	WidgetOpen       string
	WidgetWaiting    string // {n}, {t}
	WidgetWaitingNow string // {n}
	WidgetOpening    string
	WidgetButton     string
	// A deleted room's widget; the countdown to a pre-queue.
	WidgetGone        string
	WidgetLineOpensIn string // {t}

	// The page of an address that no route takes.
	NoSuchPage string // an address no route takes

	// pow: the page's words while it solves a room's proof of work,
	// and when solving failed and it tries again.
	Preparing         string
	PreparingHint     string
	PrepareFailed     string
	PrepareFailedHint string

	// passFor is the pass's time in words (WithPass), for the gate's ReadyHint.
	passFor string
}

var english = Messages{
	Lang:          "en",
	WaitingRoom:   "Waiting room",
	Intro:         "Many people want in at once, so buyers are let in a few at a time, fairly.",
	IntroPrequeue: "Many people want in at once, so places in line are drawn at random at the opening.",
	KeepOpen:      "Keep this page open: you will keep your place.",
	Ahead:         "{n} people ahead of you",
	AheadOne:      "1 person ahead of you",
	Next:          "You are next",
	NoneAhead:     "Nobody is ahead of you",
	InLine:        "{n} in line",
	ETA:           "Estimated wait: {t}",
	Hours:         "{h} h",
	Minutes:       "{m} min",
	Seconds:       "{s} s",
	Connecting:    "Connecting…",
	Reconnecting:  "Reconnecting…",
	Polling:       "Live updates are unavailable; checking every few seconds.",
	Ready:         "It is your turn!",
	ReadyHint:     "Your entry pass is valid for {t}: choose, then buy.",
	OrderButton:   "Buy now",
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

	SoldOut:        "Everything has been sold. Thank you for waiting.",
	SoldOutKeep:    "Sold out for now. Keep this page open: if stock comes back, you keep your place.",
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

	NotOpen:         "Not open yet",
	OpensAt:         "The sale opens at {time}.",
	LineOpensAt:     "You can join the line from {time}.",
	OpensIn:         "Opens in {t}",
	Prequeued:       "You are in the pre-queue",
	PrequeueHint:    "Everyone in the pre-queue gets a random place in line at opening, so there is no need to hurry or reload. Your place is drawn, not earned by speed.",
	DrawIn:          "Places are drawn in {t}",
	Drawing:         "Drawing places now…",
	Ticket:          "Your ticket number: {n} (to check the draw)",
	Paused:          "The line is paused",
	PausedHint:      "Nobody is being let in right now, so we cannot estimate your wait. Your place is kept, and this page updates when the line moves again.",
	RankUp:          "Your place in line changed.",
	RankUpReturned:  "You were away for longer than the line keeps a place, so you joined it again at the end.",
	RankUpRecount:   "We counted the line again and found more people ahead of you than we had shown.",
	PassLeft:        "Your pass is valid for {t}",
	PassWarning:     "Less than a minute left on your pass: place your order now.",
	Expired:         "Your pass has expired",
	ExpiredHint:     "Passes are held for {t} so that the line keeps moving; yours has gone to the next buyer. You can join the line again.",
	Rejoin:          "Join the line again",
	SoldOutTitle:    "Sold out",
	Ended:           "This sale has ended",
	EndedHint:       "New buyers can no longer join. Thank you for your interest.",
	TooMany:         "Too many attempts from your network. This page tries again by itself in a moment.",
	Trouble:         "The waiting room is having trouble right now. This page keeps trying by itself.",
	BackToShop:      "Back to the shop",
	MaxPerBuyer:     "At most {n} per buyer",
	ErrOverLimit:    "You can buy at most {n} per buyer in this sale, so you may still order {left}. Please choose a smaller quantity; your entry pass is still valid.",
	ErrLimitReached: "You have already ordered {n}, the most this sale allows per buyer.",
	ErrFewLeft:      "Only {n} left, fewer than you asked for. Your entry pass is still valid: please order {n} or fewer.",
	Total:           "Total",
	NextSteps:       "Keep this order number: the shop uses it for payment and delivery. You can open this page again from this browser.",
	TitleNotFound:   "This link does not lead to a waiting room",
	TitleTooMany:    "Too many requests",
	TitleTrouble:    "We are having trouble",
	TitleRefused:    "This request was refused",
	TitleNotPlaced:  "Your order was not placed",
	TitleNoSuchPage: "There is nothing here",
	NoSuchOrder:     "There is no such order, or it was placed from another browser.",
	NoSuchRoom:      "There is no waiting room at this address. Please check the link you followed.",
	BadRoomName:     "This address is not a valid waiting-room link. Please check the link you followed.",
	FormTooLarge:    "The form was too large.",
	FormInvalid:     "The form could not be read. Please go back and try again.",
	TooManyJoins:    "Too many attempts from your network. Please wait a moment, then try again.",
	AboutTime:       "about {t}",
	TroublePage:     "The waiting room is briefly unavailable. Please try again in a moment.",
	NotOpenHint:     "The line is not open yet. Open the waiting room's page again to see when it opens.",
	JoinCheck:       "We could not check this join. Please go back to the waiting room's page and join again.",

	OGOpens:   "Sale opens {time}",
	OGOpened:  "On sale since {time}",
	HomeTitle: "Sales",
	HomeIntro: "Waiting rooms of the sales open to everyone.",
	HomeEmpty: "There is no public sale right now. If you have a link to a waiting room, open it directly.",
	HomeOpens: "Opens {time}",
	// brand
	NoSuchImage:   "There is no image at this address.",
	ShareLinkGone: "This short link does not exist or was removed. Please check the link, or ask the shop for a new one.",

	WidgetPrequeue:    "The pre-queue is open",
	WidgetOpen:        "Open now",
	WidgetWaiting:     "{n} waiting · about {t}",
	WidgetWaitingNow:  "{n} waiting",
	WidgetOpening:     "Opening…",
	WidgetGone:        "This sale is no longer available",
	WidgetLineOpensIn: "Line opens in {t}",
	WidgetButton:      "Go to the sale",

	NoSuchPage: "There is no page at this address. Please check the link you followed.",

	Preparing:         "Preparing your place…",
	PreparingHint:     "This takes a moment; there is nothing you need to do.",
	PrepareFailed:     "Your place could not be prepared",
	PrepareFailedHint: "Trying again in a moment…",
}

var korean = Messages{
	Lang:          "ko",
	WaitingRoom:   "대기실",
	Intro:         "지금 접속자가 많아 공정하게 순서대로 몇 명씩 입장합니다.",
	IntroPrequeue: "지금 접속자가 많아 판매가 시작될 때 줄의 순서를 무작위로 추첨합니다.",
	KeepOpen:      "이 페이지를 열어 두시면 순서가 유지됩니다.",
	Ahead:         "내 앞에 {n}명이 있습니다",
	AheadOne:      "내 앞에 1명이 있습니다",
	Next:          "곧 입장합니다",
	NoneAhead:     "내 앞에 아무도 없습니다",
	InLine:        "대기 {n}명",
	ETA:           "예상 대기 시간: {t}",
	Hours:         "{h}시간",
	Minutes:       "{m}분",
	Seconds:       "{s}초",
	Connecting:    "연결 중…",
	Reconnecting:  "다시 연결 중…",
	Polling:       "실시간 연결을 사용할 수 없어 몇 초마다 확인합니다.",
	Ready:         "입장 차례입니다!",
	ReadyHint:     "입장권은 {t} 동안 유효합니다.",
	OrderButton:   "구매하기",
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
	SoldOutKeep:    "지금은 품절입니다. 이 페이지를 열어 두세요. 재고가 다시 들어오면 지금 순서가 그대로 유지됩니다.",
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

	NotOpen:         "아직 열리지 않았습니다",
	OpensAt:         "판매는 {time}에 시작합니다.",
	LineOpensAt:     "{time}부터 줄을 설 수 있습니다.",
	OpensIn:         "시작까지 {t}",
	Prequeued:       "사전 대기열에 들어오셨습니다",
	PrequeueHint:    "판매가 시작되면 사전 대기열의 모든 분께 무작위로 순서가 정해집니다. 서두르거나 새로고침하지 않으셔도 됩니다. 순서는 속도가 아니라 추첨으로 정해집니다.",
	DrawIn:          "순서 추첨까지 {t}",
	Drawing:         "지금 순서를 추첨하고 있습니다…",
	Ticket:          "내 번호표: {n} (추첨 확인용)",
	Paused:          "대기열이 잠시 멈췄습니다",
	PausedHint:      "지금은 입장이 멈춰 있어 대기 시간을 예측할 수 없습니다. 순서는 그대로 유지되며, 다시 움직이면 이 페이지가 갱신됩니다.",
	RankUp:          "대기 순서가 바뀌었습니다.",
	RankUpReturned:  "자리를 비운 시간이 순서를 유지하는 시간보다 길어, 줄의 맨 뒤에서 다시 기다리게 되었습니다.",
	RankUpRecount:   "대기열을 다시 세어 보니 앞에 계신 분이 표시된 것보다 많았습니다.",
	PassLeft:        "입장권 남은 시간 {t}",
	PassWarning:     "입장권 시간이 1분도 남지 않았습니다. 지금 주문해 주세요.",
	Expired:         "입장권이 만료되었습니다",
	ExpiredHint:     "줄이 계속 움직이도록 입장권은 {t} 동안만 유효하며, 내 입장권은 다음 분께 넘어갔습니다. 다시 줄을 서실 수 있습니다.",
	Rejoin:          "다시 줄 서기",
	SoldOutTitle:    "품절",
	Ended:           "판매가 종료되었습니다",
	EndedHint:       "더 이상 줄을 설 수 없습니다. 관심 가져 주셔서 감사합니다.",
	TooMany:         "같은 네트워크에서 시도가 너무 많습니다. 잠시 후 이 페이지가 자동으로 다시 시도합니다.",
	Trouble:         "대기실에 일시적인 문제가 있습니다. 이 페이지가 자동으로 계속 시도합니다.",
	BackToShop:      "쇼핑몰로 돌아가기",
	MaxPerBuyer:     "1인당 최대 {n}개",
	ErrOverLimit:    "이 판매는 1인당 최대 {n}개까지 구매하실 수 있어 {left}개 더 주문하실 수 있습니다. 수량을 줄여 주세요. 입장권은 아직 유효합니다.",
	ErrLimitReached: "이 판매의 1인당 최대 수량인 {n}개를 이미 주문하셨습니다.",
	ErrFewLeft:      "남은 수량이 {n}개뿐이라 요청하신 수량을 주문할 수 없습니다. 입장권은 아직 유효하니 {n}개 이하로 주문해 주세요.",
	Total:           "합계",
	NextSteps:       "주문 번호를 보관해 주세요. 결제와 배송은 이 번호로 진행됩니다. 이 브라우저에서 이 페이지를 다시 열어 보실 수 있습니다.",
	TitleNotFound:   "이 링크의 대기실을 찾을 수 없습니다",
	TitleTooMany:    "요청이 너무 많습니다",
	TitleTrouble:    "일시적인 문제가 발생했습니다",
	TitleRefused:    "요청이 거부되었습니다",
	TitleNotPlaced:  "주문이 완료되지 않았습니다",
	TitleNoSuchPage: "페이지를 찾을 수 없습니다",
	NoSuchOrder:     "해당 주문이 없거나 다른 브라우저에서 주문하셨습니다.",
	NoSuchRoom:      "이 주소에는 대기실이 없습니다. 받으신 링크를 확인해 주세요.",
	BadRoomName:     "올바른 대기실 링크가 아닙니다. 받으신 링크를 확인해 주세요.",
	FormTooLarge:    "양식이 너무 큽니다.",
	FormInvalid:     "양식을 읽을 수 없습니다. 돌아가서 다시 시도해 주세요.",
	TooManyJoins:    "같은 네트워크에서 시도가 너무 많습니다. 잠시 기다린 후 다시 시도해 주세요.",
	AboutTime:       "약 {t}",
	TroublePage:     "대기실을 잠시 사용할 수 없습니다. 잠시 후 다시 시도해 주세요.",
	NotOpenHint:     "아직 줄을 설 수 없습니다. 대기실 페이지를 다시 열어 시작 시간을 확인해 주세요.",
	JoinCheck:       "참여를 확인하지 못했습니다. 대기실 페이지로 돌아가 다시 참여해 주세요.",

	OGOpens:   "{time} 판매 시작",
	OGOpened:  "{time}부터 판매 중",
	HomeTitle: "판매 목록",
	HomeIntro: "누구나 참여할 수 있는 판매의 대기실입니다.",
	HomeEmpty: "지금은 공개된 판매가 없습니다. 대기실 링크를 받으셨다면 그 링크로 바로 들어가 주세요.",
	HomeOpens: "{time} 시작",
	// brand
	NoSuchImage:   "이 주소에는 이미지가 없습니다.",
	ShareLinkGone: "존재하지 않거나 삭제된 짧은 링크입니다. 링크를 확인하시거나 판매처에 새 링크를 요청해 주세요.",

	WidgetPrequeue:    "사전 대기열이 열렸습니다",
	WidgetOpen:        "지금 구매할 수 있습니다",
	WidgetWaiting:     "{n}명 대기 중 · 약 {t}",
	WidgetWaitingNow:  "{n}명 대기 중",
	WidgetOpening:     "곧 열립니다…",
	WidgetGone:        "더 이상 볼 수 없는 판매입니다",
	WidgetLineOpensIn: "{t} 후 대기열 시작",
	WidgetButton:      "판매 페이지로 가기",

	NoSuchPage: "이 주소에는 페이지가 없습니다. 따라오신 링크를 확인해 주세요.",

	Preparing:         "자리를 준비하고 있습니다…",
	PreparingHint:     "잠시만 기다려 주세요. 따로 하실 일은 없습니다.",
	PrepareFailed:     "자리를 준비하지 못했습니다",
	PrepareFailedHint: "잠시 후 다시 시도합니다…",
}

// For returns the texts of lang ("ko" or "en"); anything else is English.
// They say a pass of the default time (room.DefaultTokenTTL); WithPass
// says another.
func For(lang string) Messages { return catalogue(lang).WithPass(room.DefaultTokenTTL) }

// catalogue returns the texts of lang as written, {t} and all.
func catalogue(lang string) Messages {
	if lang == "ko" {
		return korean
	}
	return english
}

// Negotiate picks "ko" or "en" from an Accept-Language header by quality,
// defaulting to English.
func Negotiate(acceptLanguage string) string {
	lang, _ := Named(acceptLanguage)
	return lang
}

// Named picks "ko" or "en" from an Accept-Language header by quality, and
// reports whether the header named either; when it names neither (a
// crawler sends none), it returns "en" and false, and a room's page uses
// the room's default language instead. q=0 refuses a language: a header
// that accepts neither but refuses one gets the other (both refused: "en").
func Named(acceptLanguage string) (string, bool) {
	best, bestQ := "en", 0.0
	refused := map[string]bool{}
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
		primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		if primary != "ko" && primary != "en" {
			continue
		}
		if q == 0 {
			refused[primary] = true
		} else if q > bestQ {
			best, bestQ = primary, q
		}
	}
	switch {
	case bestQ > 0:
		return best, true
	case refused["ko"]:
		return "en", true
	case refused["en"]:
		return "ko", true
	}
	return "en", false
}

// Fill replaces {key} with val in s.
func Fill(s, key, val string) string { return strings.ReplaceAll(s, "{"+key+"}", val) }

// Duration formats seconds as the page does: "{h} h {m} min",
// "{m} min {s} s" or "{s} s".
func (m Messages) Duration(seconds int64) string {
	if seconds < 60 {
		return Fill(m.Seconds, "s", strconv.FormatInt(max(seconds, 0), 10))
	}
	if seconds >= 3600 {
		out := Fill(m.Hours, "h", strconv.FormatInt(seconds/3600, 10))
		if mins := seconds % 3600 / 60; mins > 0 {
			out += " " + Fill(m.Minutes, "m", strconv.FormatInt(mins, 10))
		}
		return out
	}
	out := Fill(m.Minutes, "m", strconv.FormatInt(seconds/60, 10))
	if s := seconds % 60; s > 0 {
		out += " " + Fill(m.Seconds, "s", strconv.FormatInt(s, 10))
	}
	return out
}

// Script returns the texts app.js writes, by the short names it reads.
func (m Messages) Script() map[string]string {
	return map[string]string{
		"ahead": m.Ahead, "aheadOne": m.AheadOne, "next": m.Next, "inline": m.InLine, "eta": m.ETA,
		"hour": m.Hours, "min": m.Minutes, "sec": m.Seconds, "connecting": m.Connecting, "reconnecting": m.Reconnecting,
		"polling": m.Polling, "notInLine": m.NotInLine, "soldOut": m.SoldOutTitle, "soldOutHint": m.SoldOut, "soldOutKeep": m.SoldOutKeep,
		"ready": m.Ready, "notOpen": m.NotOpen, "opensAt": m.OpensAt, "lineOpensAt": m.LineOpensAt,
		"opensIn": m.OpensIn, "prequeued": m.Prequeued, "prequeueHint": m.PrequeueHint, "drawIn": m.DrawIn,
		"drawing": m.Drawing, "noneAhead": m.NoneAhead, "intro": m.Intro, "introPrequeue": m.IntroPrequeue,
		"ticket": m.Ticket, "paused": m.Paused, "pausedHint": m.PausedHint, "rankUp": m.RankUp,
		"rankUp_returned": m.RankUpReturned, "rankUp_recount": m.RankUpRecount, "passLeft": m.PassLeft,
		"passWarning": m.PassWarning, "expired": m.Expired, "expiredHint": m.ExpiredHint, "rejoin": m.Rejoin,
		"join": m.Join, "ended": m.Ended, "endedHint": m.EndedHint, "tooMany": m.TooMany, "trouble": m.Trouble,
		"tooManyTitle": m.TitleTooMany, "troubleTitle": m.TitleTrouble,
		"preparing": m.Preparing, "preparingHint": m.PreparingHint,
		"prepareFailed": m.PrepareFailed, "prepareFailedHint": m.PrepareFailedHint,
	}
}

// WithPass returns m with the pass's time, ttl seconds, in the texts that
// say how long a pass is held.
func (m Messages) WithPass(ttl int) Messages {
	c := catalogue(m.Lang)
	m.passFor = m.Duration(int64(ttl))
	m.ReadyHint = Fill(c.ReadyHint, "t", m.passFor)
	m.ExpiredHint = Fill(c.ExpiredHint, "t", m.passFor)
	return m
}

// RankUpText explains a rank that went up, by the position's rankUpReason.
func (m Messages) RankUpText(reason string) string {
	switch reason {
	case "returned":
		return m.RankUpReturned
	case "recount":
		return m.RankUpRecount
	}
	return m.RankUp
}
