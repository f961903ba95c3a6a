-- KEYS: cfg bypass
-- add_bypass_link.lua: records a room's test link, in one step with the
-- count of the room's links and the room's existence, so that concurrent
-- adds never pass the bound and a link never outlives its room's delete.
-- ARGV: 2 the link's id, 3 its uses, 4 its end (unix ms, 0 for none),
--   5 the most links a room may have
-- Reply: 1 recorded; -1 no such room; -2 the room has as many links as it
--   may
if redis.call('EXISTS', K.cfg) == 0 then return -1 end
if redis.call('HLEN', K.bypass) >= tonumber(ARGV[5]) then return -2 end
redis.call('HSET', K.bypass, ARGV[2], ARGV[3] .. ' 0 ' .. ARGV[4])
return 1
