-- KEYS: cfg
-- create_room.lua: create a room's settings unless they exist.
-- ARGV: 2.. field, value, ...
-- Reply: 1 created, 0 already there
if redis.call('EXISTS', K.cfg) == 1 then return 0 end
redis.call('HSET', K.cfg, unpack(ARGV, 2))
return 1
