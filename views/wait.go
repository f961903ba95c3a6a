package views

import (
	"net/url"
	"strconv"
)

// WaitPage is the no-JavaScript join's short wait: the seconds left, then
// the join form carrying the signed wait token. While the wait lasts the
// page refreshes itself to Again.
type WaitPage struct {
	Room   string
	Title  string
	T      Messages
	W      WaitText
	Assets Assets
	Brand  Brand
	// ShopURL, when set, is linked back to.
	ShopURL string
	// Left is the whole seconds until the visitor may join; 0 once due.
	Left int64
	// Within is the whole seconds the token stays usable once due.
	Within int64
	// Token is the signed wait token the join form posts.
	Token string
	// UTM are the attribution fields carried from the join to the next.
	UTM []Field
}

// MaxWaitRefresh bounds the wait page's refresh period, in seconds: a long
// wait's seconds are told again now and then.
const MaxWaitRefresh = 30

// Again is the wait page's own address: its token and the UTM fields.
func (p WaitPage) Again() string {
	q := url.Values{"w": {p.Token}}
	for _, f := range p.UTM {
		q.Set(f.Name, f.Value)
	}
	return "/r/" + p.Room + "/wait?" + q.Encode()
}

// action is where the join form posts: the join route, with the UTM
// fields in its query string.
func (p WaitPage) action() string { return joinPath(p.Room, p.UTM) }

// refresh is the meta refresh's content: the seconds left (at most
// MaxWaitRefresh), then the page again.
func (p WaitPage) refresh() string {
	return strconv.FormatInt(min(max(p.Left, 1), MaxWaitRefresh), 10) + ";url=" + p.Again()
}

// WaitText are the wait page's words in one language; {t} is a duration.
type WaitText struct {
	Lang string
	// Heading says what the page is.
	Heading string
	// Wait tells the time left: {t}.
	Wait string
	// Why says why there is a wait, and that nothing is to be done.
	Why string
	// CheckAgain links to the page again, for a browser that does not
	// refresh by itself.
	CheckAgain string
	// Due says the visitor can join now; Within how long the button works:
	// {t}.
	Due    string
	Within string
	// Refused heads the pages of a wait token that cannot be used:
	// Invalid, OtherRoom, OtherNetwork, Expired, Used. Busy refuses a wait to a network
	// booked far ahead: {t} until it can ask again.
	Refused   string
	Invalid   string
	OtherRoom string
	// OtherNetwork refuses a wait token brought from another network
	// than the one it was given to.
	OtherNetwork string
	Expired      string
	Used         string
	Busy         string
}

// WaitTextFor returns the wait page's words in lang ("ko" or "en").
func WaitTextFor(lang string) WaitText {
	if lang == "ko" {
		return waitKO
	}
	return waitEN
}

var waitEN = WaitText{
	Lang:         "en",
	Heading:      "One moment before you join",
	Wait:         "Please wait {t}.",
	Why:          "A short wait keeps the line fair: it stands in for the check that a browser with JavaScript makes. You have nothing to do; this page moves on by itself.",
	CheckAgain:   "Check again",
	Due:          "You can join the line now.",
	Within:       "This button works for {t}.",
	Refused:      "This join cannot be used",
	Invalid:      "This join is not valid. Please join again.",
	OtherRoom:    "This join is for another waiting room. Please join from this room.",
	OtherNetwork: "This join was given to another network (another Wi-Fi or mobile connection). Please join again from here.",
	Expired:      "This join has expired: it works for 2 minutes once the wait is over. Please join again.",
	Used:         "This join was used already. If it was yours, your place is kept: see where you are.",
	Busy:         "Many people are joining from your network without JavaScript right now. Please try again in {t}.",
}

var waitKO = WaitText{
	Lang:         "ko",
	Heading:      "줄 서기 전 잠시만 기다려 주세요",
	Wait:         "{t} 기다려 주세요.",
	Why:          "공정한 줄 서기를 위해 잠시 기다립니다. 자바스크립트가 켜진 브라우저가 하는 확인을 대신하는 것입니다. 아무것도 하지 않으셔도 이 페이지가 저절로 넘어갑니다.",
	CheckAgain:   "다시 확인",
	Due:          "이제 줄을 설 수 있습니다.",
	Within:       "이 버튼은 {t} 동안 쓸 수 있습니다.",
	Refused:      "이 참여는 사용할 수 없습니다",
	Invalid:      "올바른 참여가 아닙니다. 다시 참여해 주세요.",
	OtherRoom:    "다른 대기실의 참여입니다. 이 대기실에서 참여해 주세요.",
	OtherNetwork: "다른 네트워크(다른 와이파이나 모바일 연결)에서 받은 참여입니다. 여기에서 다시 참여해 주세요.",
	Expired:      "참여 시간이 지났습니다. 기다림이 끝난 뒤 2분 동안만 쓸 수 있습니다. 다시 참여해 주세요.",
	Used:         "이미 사용한 참여입니다. 직접 참여하셨다면 자리는 그대로 있습니다. 현재 순서를 확인해 주세요.",
	Busy:         "지금 같은 네트워크에서 자바스크립트 없이 참여하는 분이 많습니다. {t} 후에 다시 시도해 주세요.",
}
