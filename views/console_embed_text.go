package views

// EmbedText is the texts of the console's embed page in one language.
// Strings with {room} are filled in by the server.
type EmbedText struct {
	Title       string // {room}
	Intro       string
	Snippet     string
	Settings    string
	Origins     string
	NoOrigins   string
	Target      string
	TargetNew   string
	TargetSame  string
	EditOnBrand string
	Preview     string
	PreviewNote string
	FrameTitle  string // {room}
	Embed       string // the dashboard's link
}

var embedEnglish = EmbedText{
	Title:       "Embed {room}",
	Intro:       "Paste this line into a page of your site where the live widget should appear. It shows the sale's phase live and opens the room in a new tab or the same tab.",
	Snippet:     "Snippet",
	Settings:    "Where it may appear",
	Origins:     "Sites allowed to show the widget",
	NoOrigins:   "None yet: no site can show the widget until you add one.",
	Target:      "The button opens the room",
	TargetNew:   "in a new tab",
	TargetSame:  "in the same tab",
	EditOnBrand: "Change these on the branding page",
	Preview:     "Preview",
	PreviewNote: "The widget as a visitor of an allowed site sees it now.",
	FrameTitle:  "Preview of the widget of {room}",
	Embed:       "Embed",
}

var embedKorean = EmbedText{
	Title:       "{room} 퍼가기",
	Intro:       "위젯을 보여 줄 사이트 페이지에 이 한 줄을 붙여 넣으세요. 판매 상태를 실시간으로 보여 주고, 버튼을 누르면 대기실을 새 탭이나 같은 탭에서 엽니다.",
	Snippet:     "코드",
	Settings:    "표시할 수 있는 곳",
	Origins:     "위젯을 보여 줄 수 있는 사이트",
	NoOrigins:   "아직 없습니다. 사이트를 추가하기 전에는 어디에도 위젯이 보이지 않습니다.",
	Target:      "버튼이 대기실을 여는 곳",
	TargetNew:   "새 탭",
	TargetSame:  "같은 탭",
	EditOnBrand: "브랜딩 페이지에서 바꾸기",
	Preview:     "미리 보기",
	PreviewNote: "허용된 사이트의 방문자가 지금 보는 위젯입니다.",
	FrameTitle:  "{room} 위젯 미리 보기",
	Embed:       "퍼가기",
}

// EmbedTextFor returns the embed page's texts in lang ("ko" or English).
func EmbedTextFor(lang string) EmbedText {
	if lang == "ko" {
		return embedKorean
	}
	return embedEnglish
}

// EmbedPage is the console's embed page of a room.
type EmbedPage struct {
	Page    ConsolePage
	T       EmbedText
	Room    string
	Snippet string
	Origins []string
	// SameTab is true when the button opens the room in the same tab.
	SameTab bool
}
