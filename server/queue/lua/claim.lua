-- claim.lua: READY -> CLAIMED for an order attempt. A claim whose deadline
-- has passed (its holder crashed) counts as READY again. Tokens are compared
-- through their SHA-1 digests, so the comparison leaks nothing usable.
-- KEYS: 1 tok:<visitor>, 2 active
-- ARGV: 1 token, 2 claim ttl ms, 3 visitor
-- Reply: 1 claimed, 0 no such token, -1 wrong token, -2 in use
local h = redis.call('HMGET', KEYS[1], 't', 's', 'c')
if not h[1] then return 0 end
if redis.sha1hex(h[1]) ~= redis.sha1hex(ARGV[1]) then return -1 end
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if h[2] == 'CLAIMED' and (tonumber(h[3]) or 0) > nowMs then return -2 end
local ttl = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 's', 'CLAIMED', 'c', string.format('%.0f', nowMs + ttl))
local left = redis.call('PTTL', KEYS[1])
if left >= 0 and left < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('ZADD', KEYS[2], string.format('%.0f', nowMs + ttl), ARGV[3])
end
return 1
