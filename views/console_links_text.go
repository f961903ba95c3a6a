package views

// LinksText are the console's texts of a room's test links.
type LinksText struct {
	Nav, Title, Intro                  string // Title: {room}
	Make, Uses, UsesHint               string
	ExpiresAt, ExpireHint, MakeDo      string // ExpireHint: {zone}
	NewLink, NewLinkHint               string
	List, NoLinks, Caption, Used, Ends string
	Never, Revoke, RevokeDo            string
	Revoked                            string
	Made                               string // {n} uses
	ErrUses                            string // {max}
	ErrExpires, ErrTooMany, ErrNoLink  string
	FixErrors                          string
}

var linksEnglish = LinksText{
	Nav:         "Test links",
	Title:       "Test links of {room}",
	Intro:       "A test link lets its holder into the live room at once, outside the line, to try the sale. It takes no buyer's place and never a slot past the room's limit. Every use is in the audit log.",
	Make:        "Make a test link",
	Uses:        "Uses",
	UsesHint:    "How many people the link lets in, each once.",
	ExpiresAt:   "Ends (optional)",
	ExpireHint:  "In {zone}. Empty: until revoked.",
	MakeDo:      "Make the link",
	NewLink:     "New test link",
	NewLinkHint: "Shown only this once: copy it now and send it to your staff.",
	List:        "Links",
	NoLinks:     "This room has no test links.",
	Caption:     "The room's test links",
	Used:        "Used",
	Ends:        "Ends",
	Never:       "when revoked",
	Revoke:      "Revoke",
	RevokeDo:    "Revoke link {id}",
	Revoked:     "The link was revoked: it lets nobody else in.",
	Made:        "A test link for {n} uses was made.",
	ErrUses:     "Enter a whole number from 1 to {max}.",
	ErrExpires:  "Enter a date and time in the future, or leave it empty.",
	ErrTooMany:  "The room has as many test links as it may (100): revoke one first.",
	ErrNoLink:   "The room has no such link.",
	FixErrors:   "The link was not made: see the fields below.",
}

var linksKorean = LinksText{
	Nav:         "테스트 링크",
	Title:       "{room}의 테스트 링크",
	Intro:       "테스트 링크를 가진 사람은 판매를 확인하기 위해 줄 밖에서 바로 입장합니다. 구매자의 자리를 쓰지 않고, 대기실의 한도를 넘는 자리를 쓰지도 않습니다. 모든 사용은 감사 기록에 남습니다.",
	Make:        "테스트 링크 만들기",
	Uses:        "사용 횟수",
	UsesHint:    "이 링크로 입장할 수 있는 사람 수입니다. 한 사람당 한 번입니다.",
	ExpiresAt:   "종료 시각 (선택)",
	ExpireHint:  "{zone} 기준입니다. 비워 두면 취소할 때까지 유효합니다.",
	MakeDo:      "링크 만들기",
	NewLink:     "새 테스트 링크",
	NewLinkHint: "이번 한 번만 보여 드립니다. 지금 복사해 직원에게 보내세요.",
	List:        "링크 목록",
	NoLinks:     "이 대기실에는 테스트 링크가 없습니다.",
	Caption:     "대기실의 테스트 링크",
	Used:        "사용",
	Ends:        "종료",
	Never:       "취소할 때까지",
	Revoke:      "취소",
	RevokeDo:    "링크 {id} 취소",
	Revoked:     "링크를 취소했습니다. 이제 아무도 이 링크로 입장할 수 없습니다.",
	Made:        "{n}회 사용할 수 있는 테스트 링크를 만들었습니다.",
	ErrUses:     "1부터 {max}까지의 정수를 입력해 주세요.",
	ErrExpires:  "앞으로의 날짜와 시각을 입력하거나 비워 두세요.",
	ErrTooMany:  "이 대기실의 테스트 링크가 최대(100개)입니다. 먼저 하나를 취소해 주세요.",
	ErrNoLink:   "이 대기실에 그런 링크가 없습니다.",
	FixErrors:   "링크를 만들지 못했습니다. 아래 항목을 확인해 주세요.",
}

// LinksTextFor returns the test links' texts in lang ("ko" or "en";
// anything else is English).
func LinksTextFor(lang string) LinksText {
	if lang == "ko" {
		return linksKorean
	}
	return linksEnglish
}
