package views

// BrandingText is the texts of the console's branding page in one
// language. Strings with {room}, {scheme}, {fg}, {bg}, {ratio}, {min},
// {kb} or {n} are filled in by the server.
type BrandingText struct {
	Lang string

	Nav   string // the link to the page
	Title string // {room}
	Intro string
	Saved string

	Images       string
	Logo         string
	OGImage      string
	Favicon      string
	LogoHint     string // {kb}
	OGImageHint  string // {kb}
	FaviconHint  string // {kb}
	Current      string
	None         string
	Remove       string
	Colours      string
	AccentColor  string
	AccentDark   string
	AccentHint   string
	Pick         string // a colour picker's name
	Shop         string
	ShopName     string
	ShopURL      string
	Description  string
	DescHint     string // {n}
	Language     string
	LanguageHint string
	LangDefault  string
	LangKorean   string
	LangEnglish  string
	Embed        string
	EmbedOrigins string
	EmbedHint    string // {n}
	EmbedTarget  string
	EmbedNewTab  string
	EmbedSameTab string
	Listed       string
	Save         string
	FixErrors    string
	SchemeLight  string
	SchemeDark   string
	ErrContrast  string // {scheme} {fg} {bg} {ratio} {min}
	ErrSuggest   string // {colour}: the nearest that passes
	ErrColour    string
	ErrImage     map[string]string // {kb}; canvas: {side}, {pixels}
	// ErrFormTooLarge: the whole form was over its limit, so nothing
	// was read; {logo}, {ogImage}, {favicon} are the images' limits in KB.
	ErrFormTooLarge string
	ErrNoImage      string
	ErrField        map[string]string
}

var brandingEnglish = BrandingText{
	Lang:  "en",
	Nav:   "Branding",
	Title: "Branding of {room}",
	Intro: "How the room's pages look to buyers: logo, colours, words and the shop they lead back to.",
	Saved: "Branding saved.",

	Images:          "Images",
	Logo:            "Logo",
	OGImage:         "Link preview image",
	Favicon:         "Favicon",
	LogoHint:        "PNG, JPEG, GIF or WebP, at most {kb} KB: every buyer loads it, so keep it small.",
	OGImageHint:     "PNG, JPEG, GIF or WebP, at most {kb} KB; link previews show it at 1200×630.",
	FaviconHint:     "ICO, PNG, JPEG, GIF or WebP, at most {kb} KB and 512×512.",
	Current:         "Current image",
	None:            "No image yet.",
	Remove:          "Remove this image",
	Colours:         "Accent colours",
	AccentColor:     "Accent colour (light scheme)",
	AccentDark:      "Accent colour (dark scheme)",
	AccentHint:      "A colour such as #1a73e8, used for buttons and links. Empty keeps the built-in colour. A colour is refused when text on it or in it would fall under WCAG AA contrast (4.5:1).",
	Pick:            "Pick a colour",
	Shop:            "Shop",
	ShopName:        "Shop name",
	ShopURL:         "Shop address",
	Description:     "Description",
	DescHint:        "Shown under the title and in link previews; at most {n} characters.",
	Language:        "Default language",
	LanguageHint:    "The language of visitors whose browser names none, such as link previewers.",
	LangDefault:     "Not set (English)",
	LangKorean:      "한국어 (Korean)",
	LangEnglish:     "English",
	Embed:           "Widget and listing",
	EmbedOrigins:    "Sites that may embed the widget",
	EmbedHint:       "One origin a line, such as https://shop.example; at most {n}.",
	EmbedTarget:     "The widget's button opens the room",
	EmbedNewTab:     "in a new tab",
	EmbedSameTab:    "in the same tab",
	Listed:          "List this room on the home page",
	Save:            "Save branding",
	FixErrors:       "Nothing was saved: please correct the fields marked below.",
	ErrFormTooLarge: "The upload was too large, so nothing was saved and the form shows the saved settings again. Each image has its own limit: logo at most {logo} KB, preview image {ogImage} KB, favicon {favicon} KB. Choose smaller files and try again.",
	SchemeLight:     "light",
	SchemeDark:      "dark",
	ErrContrast:     "In the {scheme} scheme, {fg} on {bg} has a contrast of {ratio}:1, under WCAG AA's {min}:1.",
	ErrSuggest:      "The nearest colour of the same hue that passes is {colour}.",
	ErrColour:       "Type a colour as # and six hexadecimal digits, such as #1a73e8.",
	ErrImage: map[string]string{
		"too_large": "This file is too large for this image: at most {kb} KB.",
		"svg":       "SVG images are not accepted (they can carry scripts). Upload a PNG, JPEG, GIF or WebP.",
		"type":      "This file is not an image of an accepted type (PNG, JPEG, GIF or WebP; ICO for the favicon).",
		"canvas":    "This image is too large in pixels: at most {side} pixels wide and high, and {pixels} pixels in all.",
		"corrupt":   "This image is damaged or incomplete. Save it again from your image editor.",
		"shape":     "A link-preview image must be at least 600×315 pixels and about 1.91 times as wide as it is high: 1200×630 is best.",
	},
	ErrNoImage: "This image is not on the server. Upload it again.",
	ErrField: map[string]string{
		"description":     "At most {n} characters, without control characters.",
		"shopName":        "At most {n} characters, without control characters.",
		"shopURL":         "Type an address that starts with https:// or http://.",
		"embedOrigins":    "Each line must be an origin such as https://shop.example: a scheme, a host and an optional port, nothing else; an international name in its xn-- form (at most {n}).",
		"defaultLanguage": "Choose a language from the list.",
		"embedTarget":     "Choose where the button opens the room.",
	},
}

var brandingKorean = BrandingText{
	Lang:  "ko",
	Nav:   "브랜딩",
	Title: "{room} 브랜딩",
	Intro: "구매자에게 보이는 대기실 페이지의 모습: 로고, 색상, 문구, 돌아갈 쇼핑몰.",
	Saved: "브랜딩을 저장했습니다.",

	Images:          "이미지",
	Logo:            "로고",
	OGImage:         "링크 미리보기 이미지",
	Favicon:         "파비콘",
	LogoHint:        "PNG, JPEG, GIF, WebP, 최대 {kb} KB. 모든 구매자가 내려받으므로 작게 만들어 주세요.",
	OGImageHint:     "PNG, JPEG, GIF, WebP, 최대 {kb} KB. 링크 미리보기에는 1200×630으로 표시됩니다.",
	FaviconHint:     "ICO, PNG, JPEG, GIF, WebP, 최대 {kb} KB, 512×512 이하.",
	Current:         "현재 이미지",
	None:            "아직 이미지가 없습니다.",
	Remove:          "이 이미지 삭제",
	Colours:         "강조 색상",
	AccentColor:     "강조 색상 (밝은 테마)",
	AccentDark:      "강조 색상 (어두운 테마)",
	AccentHint:      "#1a73e8 같은 색상으로, 버튼과 링크에 쓰입니다. 비워 두면 기본 색상을 씁니다. 그 위나 그 색의 글자가 WCAG AA 대비(4.5:1)에 못 미치면 거부됩니다.",
	Pick:            "색상 선택",
	Shop:            "쇼핑몰",
	ShopName:        "쇼핑몰 이름",
	ShopURL:         "쇼핑몰 주소",
	Description:     "설명",
	DescHint:        "제목 아래와 링크 미리보기에 표시됩니다. 최대 {n}자.",
	Language:        "기본 언어",
	LanguageHint:    "링크 미리보기처럼 브라우저가 언어를 알리지 않는 방문자의 언어입니다.",
	LangDefault:     "설정 안 함 (영어)",
	LangKorean:      "한국어",
	LangEnglish:     "English (영어)",
	Embed:           "위젯과 목록",
	EmbedOrigins:    "위젯을 넣을 수 있는 사이트",
	EmbedHint:       "한 줄에 하나씩, https://shop.example 형식. 최대 {n}개.",
	EmbedTarget:     "위젯 버튼이 대기실을 여는 곳",
	EmbedNewTab:     "새 탭",
	EmbedSameTab:    "같은 탭",
	Listed:          "첫 페이지에 이 대기실 표시",
	Save:            "브랜딩 저장",
	FixErrors:       "저장하지 않았습니다. 아래 표시된 항목을 고쳐 주세요.",
	ErrFormTooLarge: "올린 파일이 너무 커서 아무것도 저장하지 않았고, 아래에는 저장된 설정을 다시 보여 드립니다. 이미지마다 한도가 있습니다: 로고 최대 {logo}KB, 미리보기 이미지 {ogImage}KB, 파비콘 {favicon}KB. 더 작은 파일을 골라 다시 시도해 주세요.",
	SchemeLight:     "밝은",
	SchemeDark:      "어두운",
	ErrContrast:     "{scheme} 테마에서 {bg} 위의 {fg} 대비가 {ratio}:1로, WCAG AA 기준 {min}:1에 못 미칩니다.",
	ErrSuggest:      "같은 색조에서 기준을 통과하는 가장 가까운 색은 {colour}입니다.",
	ErrColour:       "#1a73e8처럼 #과 16진수 여섯 자리로 입력해 주세요.",
	ErrImage: map[string]string{
		"too_large": "이 이미지로 쓰기에는 파일이 너무 큽니다. 최대 {kb}KB까지입니다.",
		"svg":       "SVG 이미지는 받지 않습니다(스크립트를 담을 수 있습니다). PNG, JPEG, GIF, WebP로 올려 주세요.",
		"type":      "허용된 이미지 형식이 아닙니다(PNG, JPEG, GIF, WebP, 파비콘은 ICO도 가능).",
		"canvas":    "이미지의 픽셀 크기가 너무 큽니다. 가로와 세로 각각 최대 {side}픽셀, 전체 {pixels}픽셀까지입니다.",
		"corrupt":   "이미지가 손상되었거나 잘렸습니다. 이미지 편집기에서 다시 저장해 주세요.",
		"shape":     "링크 미리보기 이미지는 600×315 픽셀 이상, 가로가 세로의 약 1.91배여야 합니다. 1200×630이 가장 좋습니다.",
	},
	ErrNoImage: "서버에 없는 이미지입니다. 다시 올려 주세요.",
	ErrField: map[string]string{
		"description":     "제어 문자 없이 최대 {n}자까지 입력할 수 있습니다.",
		"shopName":        "제어 문자 없이 최대 {n}자까지 입력할 수 있습니다.",
		"shopURL":         "https:// 또는 http://로 시작하는 주소를 입력해 주세요.",
		"embedOrigins":    "각 줄은 https://shop.example 같은 출처여야 합니다. 스킴, 호스트, 선택적 포트만 쓰고 그 밖에는 쓰지 마세요. 한글 도메인은 xn-- 형식으로 적어 주세요(최대 {n}개).",
		"defaultLanguage": "목록에서 언어를 골라 주세요.",
		"embedTarget":     "버튼이 대기실을 열 곳을 골라 주세요.",
	},
}

// BrandingTextFor returns the branding page's texts in lang ("ko" or "en").
func BrandingTextFor(lang string) BrandingText {
	if lang == "ko" {
		return brandingKorean
	}
	return brandingEnglish
}
