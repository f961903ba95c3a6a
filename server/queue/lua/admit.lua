-- admit.lua: one admission tick for one room, atomically. It accrues the
-- room's global credit from Redis TIME, pops up to that many visitors in
-- ticket order (bounded by the free active slots and by the tokens given),
-- stores each visitor's token with its TTL, takes a slot for each, moves the
-- head, drains the departures and publishes one event. A crash can only
-- happen before or after all of it.
-- KEYS: 1 cfg, 2 queue, 3 head, 4 rate, 5 active, 6 admitted, 7 departed, 8 events
-- ARGV: 1 key prefix ("wr:{room}:"), 2 tick seconds, 3.. tokens
-- Reply: {count, head, waiting, burst, active, visitor...} or {-1} for an unknown room
local function I(x) return string.format('%.0f', x) end
local cfg = redis.call('HMGET', KEYS[1], 'rate', 'maxActive', 'tokenTTLSeconds', 'paused')
if not cfg[1] then return {-1} end
local rate = tonumber(cfg[1])
local maxActive = tonumber(cfg[2]) or 0
local ttl = tonumber(cfg[3]) or 300
local paused = cfg[4] == '1'
local burst = math.ceil(rate * tonumber(ARGV[2]) - 1e-9)
if burst < 1 then burst = 1 end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local nowMs = math.floor(now / 1000)

local st = redis.call('HMGET', KEYS[4], 'ts', 'credit', 'ewma', 'wts', 'wn', 'wsat')
local ts = tonumber(st[1]) or now
local credit = tonumber(st[2]) or 0
local elapsed = now - ts
if elapsed < 0 then elapsed = 0 end
credit = credit + elapsed * rate / 1000000
-- Idle credit is capped at one tick's batch, plus one so that the fraction
-- carried between ticks is never lost; a tick still pops at most a batch.
if credit > burst + 1 then credit = burst + 1 end

redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', nowMs)
local n = math.floor(credit + 1e-9)
if n > burst then n = burst end
if paused then n = 0 end
if n > #ARGV - 2 then n = #ARGV - 2 end
if maxActive > 0 then
  local free = maxActive - redis.call('ZCARD', KEYS[5])
  if n > free then n = free end
end

local head = tonumber(redis.call('GET', KEYS[3])) or 0
local admitted = {}
if n > 0 then
  local popped = redis.call('ZPOPMIN', KEYS[2], n)
  for i = 1, #popped, 2 do
    local v = popped[i]
    local ticket = tonumber(popped[i + 1])
    local k = ARGV[1] .. 'tok:' .. v
    redis.call('HSET', k, 't', ARGV[2 + (i + 1) / 2], 's', 'READY', 'n', I(ticket))
    redis.call('EXPIRE', k, ttl)
    redis.call('ZADD', KEYS[5], I(nowMs + ttl * 1000), v)
    if ticket > head then head = ticket end
    admitted[#admitted + 1] = v
  end
  if #admitted > 0 then
    credit = credit - #admitted
    redis.call('SET', KEYS[3], I(head))
    redis.call('INCRBY', KEYS[6], #admitted)
  end
end
local waiting = redis.call('ZCARD', KEYS[2])
local active = redis.call('ZCARD', KEYS[5])

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
local fields = {'ts', I(now), 'credit', string.format('%.6f', credit), 'wts', I(wts), 'wn', I(wn), 'wsat', wsat and '1' or '0'}
if ewma then
  fields[#fields + 1] = 'ewma'
  fields[#fields + 1] = string.format('%.4f', ewma)
end
redis.call('HSET', KEYS[4], unpack(fields))

local dep = redis.call('LRANGE', KEYS[7], 0, -1)
if #dep > 0 then redis.call('DEL', KEYS[7]) end
local a = '[]'
if #admitted > 0 then a = '["' .. table.concat(admitted, '","') .. '"]' end
redis.call('PUBLISH', KEYS[8], '{"h":' .. I(head) .. ',"t":' .. I(nowMs) .. ',"w":' .. I(waiting) ..
  ',"a":' .. a .. ',"d":[' .. table.concat(dep, ',') .. ']}')

local reply = {#admitted, head, waiting, burst, active}
for i = 1, #admitted do reply[#reply + 1] = admitted[i] end
return reply
