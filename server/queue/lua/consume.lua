-- consume.lua: the order committed; the token is gone and its slot is free.
-- ARGV: 2 visitor, 3 token
-- Reply: 1 consumed, 0 no such token, -1 wrong token
local k = P .. 'tok:' .. ARGV[2]
local h = redis.call('HGET', k, 't')
if not h then return 0 end
if redis.sha1hex(h) ~= redis.sha1hex(ARGV[3]) then return -1 end
redis.call('DEL', k)
redis.call('ZREM', P .. 'active', ARGV[2])
redis.call('INCR', P .. 'consumed')
return 1
