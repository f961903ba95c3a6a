-- KEYS: tokens
-- claim.lua: READY -> CLAIMED for an order attempt, fenced by a fresh
-- holder id: only that holder may release or consume the claim. A claim
-- whose deadline has passed (its holder crashed) counts as READY again.
-- The claim's deadline is never past the pass's expiry, and a claim never
-- moves the expiry: a pass never outlives its TTL.
-- ARGV: 2 visitor, 3 token, 4 claim ttl ms, 5 holder id
-- Reply: {1, claim ms} claimed; {0, 0} no such pass (or expired);
--   {-1, 0} wrong token; {-2, ms left} in use; {-4, ms left} paused after
--   too many failed attempts; {-5, 0} the token placed its order
local e = getPass(ARGV[2])
if not e then return {0, 0} end
if not sameToken(e.t, ARGV[3]) then return {-1, 0} end
local nowMs = math.floor(nowUs() / 1000)
if e.x <= nowMs then return {0, 0} end
if e.s == 'U' then return {-5, 0} end
if e.p > nowMs then return {-4, e.p - nowMs} end
if e.s == 'C' and e.c > nowMs then return {-2, e.c - nowMs} end
local deadline = nowMs + tonumber(ARGV[4])
if deadline > e.x then deadline = e.x end
e.s, e.c, e.h = 'C', deadline, ARGV[5]
putPass(ARGV[2], e)
return {1, deadline - nowMs}
