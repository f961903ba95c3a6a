-- admit.lua: one admission tick for one room, atomically. It accrues the
-- room's global credit from Redis TIME, pops up to that many live visitors
-- in ticket order (bounded by the free active slots and by the tokens
-- given), stores each one's token with its TTL, takes a slot for each, moves
-- the head, sweeps part of the line for abandoned visitors and publishes one
-- event. A crash can only happen before or after all of it.
-- ARGV: 2 tick seconds, 3.. tokens
-- Reply: {count, head, waiting, burst, active, tick, visitor...}, or {-1}
local cfg = redis.call('HMGET', KEYS[1], 'rate', 'maxActive', 'tokenTTLSeconds', 'paused', 'abandonAfterSeconds', 'mode')
if not cfg[1] then return {-1} end
local rate = tonumber(cfg[1])
local maxActive = tonumber(cfg[2]) or 0
local ttl = tonumber(cfg[3]) or 300
local paused = cfg[4] == '1'
local soldout = redis.call('EXISTS', P .. 'soldout') == 1
local abandon = (tonumber(cfg[5]) or 0) * 1000000
-- Passthrough, the no-room baseline: everyone waiting is admitted at the
-- next tick, up to the tokens given.
local passthrough = cfg[6] == 'passthrough'
local tickSec = tonumber(ARGV[2])
local burst = math.ceil(rate * tickSec - 1e-9)
if burst < 1 then burst = 1 end
local now = nowUs()
local nowMs = math.floor(now / 1000)
local Q, ACTIVE = P .. 'queue', P .. 'active'

-- Credit: rate × elapsed since the last tick of any instance, so N
-- instances admit what one would. After an idle spell (the line was empty
-- at the last tick) credit is capped at one batch plus one: the first tick
-- admits at most one batch. While the line is backlogged the cap is two
-- batches plus one, so a tick that runs up to one tick late (a busy
-- instance, a GC pause) catches up instead of losing admissions. The
-- fraction carried between ticks is never lost.
local st = redis.call('HMGET', P .. 'rate', 'ts', 'credit', 'ewma', 'wts', 'wn', 'wsat', 'backlog')
local ts = tonumber(st[1]) or now
local credit = tonumber(st[2]) or 0
local backlog = st[7] == '1'
local elapsed = now - ts
if elapsed < 0 then elapsed = 0 end
credit = credit + elapsed * rate / 1000000
local most = burst
if backlog then most = 2 * burst end
if credit > most + 1 then credit = most + 1 end

redis.call('ZREMRANGEBYSCORE', ACTIVE, '-inf', nowMs)
local n = math.floor(credit + 1e-9)
if n > most then n = most end
if passthrough then n = #ARGV - 2 end
if paused or soldout then n = 0 end
if n > #ARGV - 2 then n = #ARGV - 2 end
if maxActive > 0 and not passthrough then
  local free = maxActive - redis.call('ZCARD', ACTIVE)
  if n > free then n = free end
end

local head = tonumber(redis.call('GET', P .. 'head')) or 0
local admitted = {}
local abandoned = 0
-- Abandoned visitors found at the front depart instead of taking an
-- admission; a few more rounds fill their places.
for _ = 1, 8 do
  local want = n - #admitted
  if want <= 0 then break end
  local popped = redis.call('ZPOPMIN', Q, want)
  if #popped == 0 then break end
  for i = 1, #popped, 2 do
    local v = popped[i]
    local ticket = tonumber(popped[i + 1])
    if ticket > head then head = ticket end
    if alive(ticket, now, abandon) then
      local k = P .. 'tok:' .. v
      admitted[#admitted + 1] = v
      redis.call('HSET', k, 't', ARGV[2 + #admitted], 's', 'READY', 'n', I(ticket))
      redis.call('EXPIRE', k, ttl)
      redis.call('ZADD', ACTIVE, I(nowMs + ttl * 1000), v)
    else
      redis.call('ZADD', Q, I(ticket), v) -- depart() records it properly
      depart(v, ticket)
      abandoned = abandoned + 1
    end
  end
end
if #admitted > 0 then
  credit = credit - #admitted
  redis.call('INCRBY', P .. 'admitted', #admitted)
end
redis.call('SET', P .. 'head', I(head))

-- Sweep part of the line for abandoned visitors, from a cursor that wraps,
-- so that everyone's rank drops as soon as someone ahead has gone.
local waiting = redis.call('ZCARD', Q)
if abandon > 0 and waiting > 0 then
  local k = math.ceil(waiting * tickSec * 4000000 / abandon)
  if k < 200 then k = 200 end
  if k > 5000 then k = 5000 end
  local cursor = tonumber(redis.call('GET', P .. 'sweep')) or 0
  local batch = redis.call('ZRANGEBYSCORE', Q, '(' .. I(cursor), '+inf', 'WITHSCORES', 'LIMIT', 0, k)
  for i = 1, #batch, 2 do
    local ticket = tonumber(batch[i + 1])
    if not alive(ticket, now, abandon) then
      depart(batch[i], ticket)
      abandoned = abandoned + 1
    end
    cursor = ticket
  end
  if #batch < 2 * k then cursor = 0 end
  redis.call('SET', P .. 'sweep', I(cursor))
  waiting = redis.call('ZCARD', Q)
end
redis.call('ZREMRANGEBYSCORE', P .. 'departed', '-inf', I(head))
local active = redis.call('ZCARD', ACTIVE)

-- Measured admission rate: an EWMA over 1 s windows in which the line never
-- ran dry, so that an idle room does not drag the estimate to zero.
local ewma = tonumber(st[3])
local wts = tonumber(st[4]) or now
local wn = (tonumber(st[5]) or 0) + #admitted
local wsat = st[6] ~= '0'
if waiting == 0 or paused then wsat = false end
if now - wts >= 1000000 then
  if wsat and wn > 0 then
    local sample = wn * 1000000 / (now - wts)
    if ewma then ewma = 0.3 * sample + 0.7 * ewma else ewma = sample end
  end
  wts = now
  wn = 0
  wsat = true
end
local fields = {'ts', I(now), 'credit', string.format('%.6f', credit), 'wts', I(wts), 'wn', I(wn), 'wsat', wsat and '1' or '0',
  'backlog', (waiting > 0 and not paused and not soldout) and '1' or '0'}
if ewma then
  fields[#fields + 1] = 'ewma'
  fields[#fields + 1] = string.format('%.4f', ewma)
end
redis.call('HSET', P .. 'rate', unpack(fields))

-- One event per tick. Visitor ids are base64url, tickets integers: the JSON
-- needs no escaping. Tokens never go on the channel.
local tick = redis.call('INCR', P .. 'tick')
local dep = redis.call('LRANGE', P .. 'departed:new', 0, -1)
if #dep > 0 then redis.call('DEL', P .. 'departed:new') end
local a = '[]'
if #admitted > 0 then a = '["' .. table.concat(admitted, '","') .. '"]' end
local r = ewma or rate
redis.call('PUBLISH', P .. 'events', '{"n":' .. I(tick) .. ',"h":' .. I(head) .. ',"t":' .. I(now) ..
  ',"w":' .. I(waiting) .. ',"r":' .. string.format('%.4f', r) ..
  ',"s":' .. (soldout and '1' or '0') .. ',"a":' .. a .. ',"d":[' .. table.concat(dep, ',') .. ']}')

local want = 2 * burst
if passthrough then want = math.min(math.max(waiting + 100, 2 * burst), 20000) end
local reply = {#admitted, head, waiting, want, active, tick}
for i = 1, #admitted do reply[#reply + 1] = admitted[i] end
return reply
