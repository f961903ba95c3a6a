-- consume.lua: the order committed; the token is gone and its slot is free.
-- KEYS: 1 tok:<visitor>, 2 active, 3 consumed
-- ARGV: 1 token, 2 visitor
-- Reply: 1 consumed, 0 no such token, -1 wrong token
local h = redis.call('HGET', KEYS[1], 't')
if not h then return 0 end
if redis.sha1hex(h) ~= redis.sha1hex(ARGV[1]) then return -1 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('INCR', KEYS[3])
return 1
