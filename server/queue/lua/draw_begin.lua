-- KEYS: cfg draw drawlease seq* head* seen* seenbase* prequeue pqn
-- draw_begin.lua: freezes the pre-queue once the room is past its opening
-- and takes (or renews) the draw's lease for ARGV[2].
-- ARGV: 2 owner, 3 lease ms
-- Reply: {-1} unknown room, {0, state} nothing to draw (state '' or
--   'done'), {1} another owner holds the lease, {2, base, n, written, seed,
--   nonce, commit, lines} (seed '' until the reveal, unless stored without
--   a nonce; lines '' in a room whose pre-queue is all the first line's,
--   else "n0 b1 n1 b2 n2 b3 n3": the first line's entries, and each other
--   line's block, see freeze)
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
local d = redis.call('HMGET', K.draw, 'base', 'n', 'written', 'seed', 'nonce', 'commit', 'n0', 'b1', 'n1', 'b2', 'n2', 'b3', 'n3')
local lines = ''
if d[7] then
  local f = {}
  for i = 7, 13 do f[#f + 1] = d[i] or '0' end
  lines = table.concat(f, ' ')
end
return {2, tonumber(d[1]), tonumber(d[2]), tonumber(d[3]) or 0, d[4] or '', d[5] or '', d[6] or '', lines}
