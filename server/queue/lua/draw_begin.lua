-- KEYS: cfg draw drawlease seq head seen seenbase prequeue
-- draw_begin.lua: freezes the pre-queue once the room is past its opening
-- and takes (or renews) the draw's lease for ARGV[2].
-- ARGV: 2 owner, 3 lease ms
-- Reply: {-1} unknown room, {0, state} nothing to draw (state '' or
--   'done'), {1} another owner holds the lease, {2, base, n, written, seed,
--   nonce, commit} (seed '' until the reveal, unless stored without a nonce)
if redis.call('EXISTS', K.cfg) == 0 then return {-1} end
local ph = phase(math.floor(nowUs() / 1000))
if ph ~= 'drawing' and redis.call('HGET', K.draw, 'state') ~= 'drawing' then
  return {0, redis.call('HGET', K.draw, 'state') or ''}
end
freeze()
if redis.call('HGET', K.draw, 'state') == 'done' then return {0, 'done'} end
local cur = redis.call('GET', K.drawlease)
if cur and cur ~= ARGV[2] then return {1} end
redis.call('SET', K.drawlease, ARGV[2], 'PX', ARGV[3])
local d = redis.call('HMGET', K.draw, 'base', 'n', 'written', 'seed', 'nonce', 'commit')
return {2, tonumber(d[1]), tonumber(d[2]), tonumber(d[3]) or 0, d[4] or '', d[5] or '', d[6] or ''}
