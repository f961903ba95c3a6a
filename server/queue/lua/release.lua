-- release.lua: CLAIMED -> READY after an order attempt rolled back.
-- KEYS: 1 tok:<visitor>
-- ARGV: 1 token
-- Reply: 1 released, 0 no such token, -1 wrong token, -3 not claimed
local h = redis.call('HMGET', KEYS[1], 't', 's')
if not h[1] then return 0 end
if redis.sha1hex(h[1]) ~= redis.sha1hex(ARGV[1]) then return -1 end
if h[2] ~= 'CLAIMED' then return -3 end
redis.call('HSET', KEYS[1], 's', 'READY')
redis.call('HDEL', KEYS[1], 'c')
return 1
