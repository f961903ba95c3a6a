package views

// ProxyText is the texts of the pages that the reverse proxy (gate mode)
// answers on the shop's host in one language. {room} is filled in by the
// server.
type ProxyText struct {
	Lang string
	// OriginDown: the shop did not answer (502).
	OriginDownTitle, OriginDown string
	// Unavailable: the line cannot be checked, and the room fails closed (503).
	UnavailableTitle, Unavailable string
	// Refused: a protected page asked for without a session, by a method
	// that cannot be redirected (403).
	RefusedTitle, Refused string
	// NotHere: a path of the gate that this proxy does not serve (404, 405).
	NotHereTitle, NotHere string
	// BadAddress: a path encoded so that servers may read it differently
	// (an encoded slash, NUL or "%"), refused (400).
	BadAddressTitle, BadAddress string
	Retry, ToRoom               string
}

var proxyEnglish = ProxyText{
	Lang:             "en",
	OriginDownTitle:  "The shop is not answering",
	OriginDown:       "The shop could not be reached just now. Please try again in a moment.",
	UnavailableTitle: "Please retry in a moment",
	Unavailable:      "We could not check your place in line just now. Your place is kept: please retry in a moment.",
	RefusedTitle:     "Please go through the line",
	Refused:          "This page opens only for buyers whose turn has come. Join the line, and you will be sent here when it is your turn.",
	NotHereTitle:     "Nothing here",
	NotHere:          "This address is not a page of the shop.",
	BadAddressTitle:  "This address cannot be opened",
	BadAddress:       "The address holds characters the shop does not accept. Please open the page from the shop's own links.",
	Retry:            "Try again",
	ToRoom:           "Go to the line",
}

var proxyKorean = ProxyText{
	Lang:             "ko",
	OriginDownTitle:  "쇼핑몰이 응답하지 않습니다",
	OriginDown:       "지금은 쇼핑몰에 연결할 수 없습니다. 잠시 후 다시 시도해 주세요.",
	UnavailableTitle: "잠시 후 다시 시도해 주세요",
	Unavailable:      "지금은 대기 순서를 확인할 수 없습니다. 순서는 유지되니 잠시 후 다시 시도해 주세요.",
	RefusedTitle:     "대기열을 거쳐 주세요",
	Refused:          "이 페이지는 차례가 된 구매자에게만 열립니다. 대기열에 들어가시면 차례가 되었을 때 이곳으로 안내해 드립니다.",
	NotHereTitle:     "페이지가 없습니다",
	NotHere:          "이 주소는 쇼핑몰의 페이지가 아닙니다.",
	BadAddressTitle:  "이 주소는 열 수 없습니다",
	BadAddress:       "주소에 쇼핑몰이 받지 않는 문자가 들어 있습니다. 쇼핑몰의 링크를 눌러 페이지를 열어 주세요.",
	Retry:            "다시 시도",
	ToRoom:           "대기열로 가기",
}

// ProxyTextFor returns the proxy pages' texts in lang ("ko" or "en").
func ProxyTextFor(lang string) ProxyText {
	if lang == "ko" {
		return proxyKorean
	}
	return proxyEnglish
}

// ProxyPage is a page that the reverse proxy answers itself on the shop's
// host: its heading says what happened in words, never the HTTP status.
type ProxyPage struct {
	Status           int
	Heading, Message string
	// RoomURL, when set, is the room's page, linked to.
	RoomURL string
	// Retry offers to load the page again.
	Retry bool
	// CSS is the absolute URL of the waiting room's stylesheet (the shop's
	// host has none of its own at this path); "" leaves the page plain.
	CSS string
	T   ProxyText
}
