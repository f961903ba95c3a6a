package views

// ShareText is the texts of the console's share-link page in one
// language. Strings with {room}, {url} or {n} are filled in by the server.
type ShareText struct {
	Lang string

	Title       string // {room}
	Intro       string
	ShareLink   string // the link to this page from other console pages
	Source      string
	Medium      string
	Campaign    string
	Content     string
	Term        string
	SourceHint  string
	MediumHint  string
	CampaignHnt string
	ContentHint string
	TermHint    string
	Create      string
	NewLink     string
	Links       string
	Caption     string
	NoLinks     string
	Code        string
	ShortURL    string
	LongURL     string
	Clicks      string
	CreatedBy   string
	CreatedAt   string
	QR          string
	QRAlt       string // {code}
	PNG         string
	SVG         string
	Delete      string
	DeleteLabel string // {code}
	Created     string // {url}
	Deleted     string // {code}
	FixErrors   string
	ErrRequired string
	ErrBadValue string // {n}
	ErrFull     string // {n}
	ErrNoLink   string
	ErrNoLinks  string // share links are not configured
	LinkClicks  string // the attribution page's column
	// ErrOther refuses a utm_source or utm_medium that joins would count
	// under (other).
	ErrOther string
	// NoPublicURL warns that PUBLIC_URL is unset: {base} is the address
	// the links use instead.
	NoPublicURL string
	// The confirmation of a deletion.
	ConfirmTitle  string // {code}
	ConfirmBody   string // {url}, {n}
	ConfirmDelete string
	Keep          string
}

var shareEnglish = ShareText{
	Lang:          "en",
	Title:         "Share links of {room}",
	Intro:         "Build a short link that carries your campaign's UTM values to the room, with a QR code for print. Each link counts its clicks; orders count under their campaign on the attribution page.",
	ShareLink:     "Share links",
	Source:        "utm_source",
	Medium:        "utm_medium",
	Campaign:      "utm_campaign",
	Content:       "utm_content",
	Term:          "utm_term",
	SourceHint:    "Where the link is posted, as a short Latin token: kakao, naver, instagram, newsletter. Required; saved in lower case.",
	MediumHint:    "The kind of channel, as a short Latin token: social, cpc, email, print. Saved in lower case.",
	CampaignHnt:   "The campaign's name: spring-sale. Any text; counted exactly as written (Spring and spring are two campaigns).",
	ContentHint:   "Tells apart links of one campaign: banner-top, story-2.",
	TermHint:      "The paid keyword, for search ads.",
	Create:        "Create the link",
	NewLink:       "New link",
	Links:         "Links",
	Caption:       "The room's share links, newest first (scrolls sideways on narrow screens)",
	NoLinks:       "No link yet.",
	Code:          "Code",
	ShortURL:      "Short link",
	LongURL:       "Leads to",
	Clicks:        "Clicks",
	CreatedBy:     "Created by",
	CreatedAt:     "Created",
	QR:            "QR code",
	QRAlt:         "QR code of link {code}",
	PNG:           "PNG",
	SVG:           "SVG",
	Delete:        "Delete",
	DeleteLabel:   "Delete link {code}",
	Created:       "Link created: {url}",
	Deleted:       "Link {code} deleted: it now answers “not found”.",
	FixErrors:     "The link was not created: fix the fields marked below.",
	ErrRequired:   "utm_source is required.",
	ErrBadValue:   "At most {n} bytes of plain text (no control characters).",
	ErrFull:       "This room has {n} links, the most it can have. Delete links it no longer needs to create new ones.",
	ErrNoLink:     "This room has no such link.",
	ErrNoLinks:    "Share links are not available on this server.",
	LinkClicks:    "Link clicks",
	ErrOther:      "This value would be counted under (other): use a short Latin token such as kakao, naver, instagram (letters a-z, digits, . _ -, at most 64).",
	NoPublicURL:   "PUBLIC_URL is not set: these short links and QR codes use the address this console was opened at ({base}). Set PUBLIC_URL to the shop's public address before you print or publish them.",
	ConfirmTitle:  "Delete link {code}?",
	ConfirmBody:   "The short link {url} has {n} clicks. Once deleted it answers “not found”, and QR codes already printed with it stop working.",
	ConfirmDelete: "Delete the link",
	Keep:          "Keep it",
}

var shareKorean = ShareText{
	Lang:          "ko",
	Title:         "{room} 공유 링크",
	Intro:         "캠페인의 UTM 값을 대기실로 전달하는 짧은 링크와 인쇄용 QR 코드를 만듭니다. 링크마다 클릭 수가 집계되고, 주문은 캠페인 성과 페이지에서 캠페인별로 집계됩니다.",
	ShareLink:     "공유 링크",
	Source:        "utm_source",
	Medium:        "utm_medium",
	Campaign:      "utm_campaign",
	Content:       "utm_content",
	Term:          "utm_term",
	SourceHint:    "링크를 올리는 곳을 짧은 영문 토큰으로: kakao, naver, instagram, newsletter. 필수이며 소문자로 저장됩니다.",
	MediumHint:    "채널의 종류를 짧은 영문 토큰으로: social, cpc, email, print. 소문자로 저장됩니다.",
	CampaignHnt:   "캠페인 이름: spring-sale. 자유롭게 쓸 수 있으며 쓴 그대로 집계됩니다 (Spring과 spring은 다른 캠페인).",
	ContentHint:   "같은 캠페인의 링크를 구분합니다: banner-top, story-2.",
	TermHint:      "검색 광고의 유료 키워드.",
	Create:        "링크 만들기",
	NewLink:       "새 링크",
	Links:         "링크",
	Caption:       "이 대기실의 공유 링크, 최신순 (좁은 화면에서는 옆으로 스크롤됩니다)",
	NoLinks:       "아직 링크가 없습니다.",
	Code:          "코드",
	ShortURL:      "짧은 링크",
	LongURL:       "연결되는 주소",
	Clicks:        "클릭",
	CreatedBy:     "만든 사람",
	CreatedAt:     "만든 시각",
	QR:            "QR 코드",
	QRAlt:         "{code} 링크의 QR 코드",
	PNG:           "PNG",
	SVG:           "SVG",
	Delete:        "삭제",
	DeleteLabel:   "{code} 링크 삭제",
	Created:       "링크를 만들었습니다: {url}",
	Deleted:       "{code} 링크를 삭제했습니다. 이제 “찾을 수 없음”으로 응답합니다.",
	FixErrors:     "링크를 만들지 못했습니다. 아래 표시된 항목을 고쳐 주세요.",
	ErrRequired:   "utm_source는 필수입니다.",
	ErrBadValue:   "제어 문자가 없는 일반 텍스트 {n}바이트 이하여야 합니다.",
	ErrFull:       "이 대기실의 링크가 최대 개수인 {n}개입니다. 더 필요 없는 링크를 삭제한 뒤 새 링크를 만들어 주세요.",
	ErrNoLink:     "이 대기실에 그런 링크가 없습니다.",
	ErrNoLinks:    "이 서버에서는 공유 링크를 사용할 수 없습니다.",
	LinkClicks:    "링크 클릭",
	ErrOther:      "이 값은 (other)로 집계됩니다. kakao, naver, instagram처럼 짧은 영문 토큰을 써 주세요 (영문 소문자, 숫자, . _ -, 64자 이하).",
	NoPublicURL:   "PUBLIC_URL이 설정되지 않았습니다. 이 짧은 링크와 QR 코드는 콘솔을 연 주소({base})를 사용합니다. 인쇄하거나 게시하기 전에 PUBLIC_URL을 상점의 공개 주소로 설정해 주세요.",
	ConfirmTitle:  "{code} 링크를 삭제할까요?",
	ConfirmBody:   "짧은 링크 {url}의 클릭 수는 {n}회입니다. 삭제하면 “찾을 수 없음”으로 응답하고, 이미 인쇄한 QR 코드도 더 이상 작동하지 않습니다.",
	ConfirmDelete: "링크 삭제",
	Keep:          "유지하기",
}

// ShareTextFor returns the share-link page's texts in lang ("ko" or "en").
func ShareTextFor(lang string) ShareText {
	if lang == "ko" {
		return shareKorean
	}
	return shareEnglish
}
