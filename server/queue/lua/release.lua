-- release.lua: CLAIMED -> READY after an order attempt rolled back.
-- ARGV: 2 visitor, 3 token
-- Reply: 1 released, 0 no such token, -1 wrong token, -3 not claimed
local k = P .. 'tok:' .. ARGV[2]
local h = redis.call('HMGET', k, 't', 's')
if not h[1] then return 0 end
if redis.sha1hex(h[1]) ~= redis.sha1hex(ARGV[3]) then return -1 end
if h[2] ~= 'CLAIMED' then return -3 end
redis.call('HSET', k, 's', 'READY')
redis.call('HDEL', k, 'c')
return 1
