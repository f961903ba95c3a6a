-- KEYS: drawlease
-- draw_yield.lua: gives the draw's lease up when ARGV[2] holds it, so that
-- another instance may draw at once.
-- ARGV: 2 owner
-- Reply: 1 given up, 0 not held
if redis.call('GET', K.drawlease) ~= ARGV[2] then return 0 end
redis.call('DEL', K.drawlease)
return 1
