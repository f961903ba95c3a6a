-- KEYS: tokens jtis jtiof
-- mint.lua (GATE): records pass id ARGV[4] for visitor ARGV[2]'s live
-- pass ARGV[3], replacing the visitor's earlier pass id: one pass id per
-- pass, so that minting again never grows the maps.
-- ARGV: 2 visitor, 3 token, 4 pass id (jti)
-- Reply: {1, pass expiry ms} minted; {0, 0} no such pass, expired, foreign
--   token or a pass id of another visitor; {-2, ms left} claimed by an
--   attempt; {-5, 0} the pass was used
local v = ARGV[2]
local e = getPass(v)
if not e or not sameToken(e.t, ARGV[3]) then return {0, 0} end
local nowMs = math.floor(nowUs() / 1000)
if e.x <= nowMs then return {0, 0} end
if e.s == 'U' then return {-5, 0} end
if e.s == 'C' and e.c > nowMs then return {-2, e.c - nowMs} end
local taken = redis.call('HGET', K.jtis, ARGV[4])
if taken and string.match(taken, '^(%S+)') ~= v then return {0, 0} end
local old = redis.call('HGET', K.jtiof, v)
if old and old ~= ARGV[4] then redis.call('HDEL', K.jtis, old) end
redis.call('HSET', K.jtis, ARGV[4], v .. ' ' .. e.t)
redis.call('HSET', K.jtiof, v, ARGV[4])
return {1, e.x}
