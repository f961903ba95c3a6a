-- KEYS: queue* counts departed* departing* tokens active prequeue withdrawn draw cfg rate away* awaytk* back* campof jtis jtiof pqline pqn
-- leave.lua: a visitor leaves the line (or the pre-queue, or the side list
-- of those passed over while away), or gives up an unused pass.
-- ARGV: 2 visitor
-- Reply: 1 left the line, 2 gave up a READY pass, 0 nothing to leave
local v = ARGV[2]
if leaveLines(v, math.max(#parseLines(redis.call('HGET', K.cfg, 'lines')), 1)) then return 1 end
local nowMs = math.floor(nowUs() / 1000)
local e = livePass(v, nowMs)
if e and e.s == 'R' then
  redis.call('HDEL', K.tokens, v)
  redis.call('ZREM', K.active, v)
  forgetJtis({v}) -- GATE
  redis.call('HINCRBY', K.counts, 'forfeited', 1)
  local ttl = tonumber(redis.call('HGET', K.cfg, 'tokenTTLSeconds')) or 300
  noteHolds(1, math.max(0, nowMs - (e.x - ttl * 1000))) -- ABSENCE: for the ETA
  return 2
end
return 0
