-- KEYS: cfg rate head* tick queue* soldout departed* active sessions back*
-- snapshot.lua: what an instance needs to compute ranks in-process after it
-- (re)subscribes: the tick, the head and the departed tickets above it.
-- Reply: {tick, head, waiting, etaRate, soldout, paused, slots,
--   readySpreadMs (-1: the server's default), createdMs (0: unknown),
--   lines, departed...}
-- LINES: head and departed are the first line's; lines is '' in a room
-- without lines, else every line's head, waiting, throughput and
-- departed tickets above its head, as the event's "L" (admit.lua).
local cfg = redis.call('HMGET', K.cfg, 'rate', 'paused', 'maxActive', 'tokenTTLSeconds', 'readySpreadMs', 'createdMs', 'lines')
if not cfg[1] then return {-1} end
local slots = slotSchedule(tonumber(cfg[1]), tonumber(cfg[3]) or 0, tonumber(cfg[4]) or 300, math.floor(nowUs() / 1000))
-- ABSENCE: the ETA's throughput (see lib.lua), and paused.
local r = achievable(tonumber(cfg[1]), tonumber(cfg[3]) or 0, tonumber(cfg[4]) or 300)
local eta = string.format('%.4f', r)
local head = tonumber(redis.call('GET', K.head)) or 0
local lines = parseLines(cfg[7])
local waiting, ls = 0, ''
if #lines > 0 then
  local shares, parts = lineShares(lines), {}
  for i = 1, #lines do
    useLine(i)
    local h = tonumber(redis.call('GET', K.head)) or 0
    local w = redis.call('ZCARD', K.queue)
    waiting = waiting + w
    parts[i] = '{"h":' .. I(h) .. ',"w":' .. I(w) .. ',"r":' .. string.format('%.4f', r * shares[i]) ..
      ',"d":[' .. table.concat(redis.call('ZRANGEBYSCORE', K.departed, '(' .. I(h), '+inf'), ',') .. ']}'
  end
  useLine(1)
  ls = '[' .. table.concat(parts, ',') .. ']'
else
  waiting = redis.call('ZCARD', K.queue)
end
local reply = {tonumber(redis.call('GET', K.tick)) or 0, head, waiting, eta,
  redis.call('EXISTS', K.soldout), stopped(cfg[2], cfg[1]) and 1 or 0, slots, -- ADAPT: a rate of 0 is paused too
  tonumber(cfg[5]) or -1, tonumber(cfg[6]) or 0, ls}
local dep = redis.call('ZRANGEBYSCORE', K.departed, '(' .. I(head), '+inf')
for i = 1, #dep do reply[#reply + 1] = tonumber(dep[i]) end
return reply
