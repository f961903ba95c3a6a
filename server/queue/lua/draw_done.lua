-- KEYS: draw drawlease prequeue withdrawn pqline pqn
-- draw_done.lua: once every place is written, marks the draw done (the
-- next tick admits) and reveals its seed, drops the pre-queue in the
-- background and gives the lease up.
-- ARGV: 2 owner, 3 the seed (hex)
-- Reply: 1 done, 0 places missing, -1 lease lost
if redis.call('GET', K.drawlease) ~= ARGV[2] then return -1 end
local d = redis.call('HMGET', K.draw, 'n', 'written')
if (tonumber(d[2]) or 0) < (tonumber(d[1]) or 0) then return 0 end
redis.call('HSET', K.draw, 'state', 'done', 'seed', ARGV[3])
redis.call('UNLINK', K.prequeue, K.withdrawn, K.pqline, K.pqn)
redis.call('DEL', K.drawlease)
return 1
