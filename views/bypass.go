package views

// Bypass is a test link's page: what it does, and the button that uses it.
type Bypass struct {
	Room   string
	Title  string
	Token  string
	T      Messages
	B      BypassText
	Assets Assets
	Brand  Brand
}

// action is where the page's button posts.
func (p Bypass) action() string { return "/r/" + p.Room + "/bypass" }

// BypassText are the texts of a test link's page, and of its refusals.
type BypassText struct {
	// Heading and Hint say what the link does; Enter is its button.
	Heading, Hint, Enter string
	// LinkGone refuses a link that is not valid, revoked, expired or
	// used up; Full one that finds every slot of the room held.
	LinkGone, Full string
}

var bypassEnglish = BypassText{
	Heading:  "Test link: enter without waiting",
	Hint:     "This link is for the shop's staff, to try the live sale. It lets you in at once, outside the line, and takes one of its uses. Buyers in line keep their places.",
	Enter:    "Enter now",
	LinkGone: "This test link is not valid: it was revoked, has expired or has been used as many times as it allows.",
	Full:     "Every place the shop can serve at once is taken. Try again in a moment.",
}

var bypassKorean = BypassText{
	Heading:  "테스트 링크: 기다리지 않고 입장",
	Hint:     "쇼핑몰 직원이 실제 판매를 확인하기 위한 링크입니다. 줄 밖에서 바로 입장하며, 링크의 사용 횟수를 1회 씁니다. 줄을 선 구매자의 자리는 그대로입니다.",
	Enter:    "지금 입장",
	LinkGone: "유효하지 않은 테스트 링크입니다. 취소되었거나, 기한이 지났거나, 허용된 횟수만큼 이미 사용되었습니다.",
	Full:     "쇼핑몰이 한 번에 받을 수 있는 자리가 모두 찼습니다. 잠시 후 다시 시도해 주세요.",
}

// BypassTextFor returns the test link's texts in lang ("ko" or "en";
// anything else is English).
func BypassTextFor(lang string) BypassText {
	if lang == "ko" {
		return bypassKorean
	}
	return bypassEnglish
}
