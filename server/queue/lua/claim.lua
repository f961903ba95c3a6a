-- claim.lua: READY -> CLAIMED for an order attempt. A claim whose deadline
-- has passed (its holder crashed) counts as READY again. Tokens are compared
-- through their SHA-1 digests, so the comparison leaks nothing usable.
-- ARGV: 2 visitor, 3 token, 4 claim ttl ms
-- Reply: 1 claimed, 0 no such token, -1 wrong token, -2 in use
local k = P .. 'tok:' .. ARGV[2]
local h = redis.call('HMGET', k, 't', 's', 'c')
if not h[1] then return 0 end
if redis.sha1hex(h[1]) ~= redis.sha1hex(ARGV[3]) then return -1 end
local nowMs = math.floor(nowUs() / 1000)
if h[2] == 'CLAIMED' and (tonumber(h[3]) or 0) > nowMs then return -2 end
local ttl = tonumber(ARGV[4])
redis.call('HSET', k, 's', 'CLAIMED', 'c', I(nowMs + ttl))
local left = redis.call('PTTL', k)
if left >= 0 and left < ttl then
  redis.call('PEXPIRE', k, ttl)
  redis.call('ZADD', P .. 'active', I(nowMs + ttl), ARGV[2])
end
return 1
