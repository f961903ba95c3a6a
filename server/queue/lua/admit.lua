-- KEYS: cfg soldout rate active tokens done queue* head* seq* counts seen* seenbase* departed* departing* sweep* tick draw prequeue away* awaytk* back* attr campof camp* campbase* jtis jtiof sessions pqn
-- admit.lua: one admission tick for one room, atomically. It accrues the
-- room's global credit from Redis TIME, sweeps expired passes, pops up to
-- that many live visitors in ticket order (bounded by the free active slots
-- and by the tokens given), stores each one's pass with its expiry, takes a
-- slot for each, moves the head, sweeps part of the line for abandoned
-- visitors, drops the liveness cells behind the head and publishes one
-- event. Visitors away at their turn are passed over and kept aside; those
-- who came back are admitted first (see lib.lua, ABSENCE). A crash can only
-- happen before or after all of it.
-- LINES: in a room with lines, the tick's admissions are split between
-- the lines that have anyone waiting, by their shares among them (see
-- splitCredit); a line that cannot use its part gives it to the others.
-- Each line has its own head, departures and sweeps.
-- ARGV: 2 tick seconds, 3 a random seed (mode random), 4.. tokens
-- IDLE: a room that sleeps (see wake in lib.lua) answers at once until its
-- wakeAt; a tick that finds it quiet puts it to sleep.
-- Reply: {count, head, waiting, burst, active, tick, leaves, abandoned,
--   expired, phase, rate (as set), prequeued, paused, soldout, sessions,
--   sessionsOpened, sessionsEnded, sessionsIdle, asleep (1 when this tick
--   put the room to sleep), wakeIn (ms from now to wakeAt, 0: none),
--   visitor...}, {-2, wakeIn} when it slept and nothing ran, or {-1}
-- The mark holds only while the room is still empty (one EXISTS): a join
-- that did not wake it (an instance of a version without sleep, during a
-- rolling deploy) is found at the next check.
local sleep = redis.call('HMGET', K.rate, 'asleep', 'wakeAt')
local function quiet()
  for i = 2, #LK do
    if redis.call('EXISTS', LK[i].queue, LK[i].back, LK[i].away) > 0 then return false end
  end
  return redis.call('EXISTS', K.queue, K.prequeue, K.back, K.away, K.active, K.done, K.sessions) == 0
end
if sleep[1] and quiet() then
  local wakeAt = tonumber(sleep[2]) or 0
  if wakeAt == 0 then return {-2, 0} end
  local ms = math.floor(nowUs() / 1000)
  if ms < wakeAt then return {-2, wakeAt - ms} end
end
local cfg = redis.call('HMGET', K.cfg, 'rate', 'maxActive', 'tokenTTLSeconds', 'paused', 'abandonAfterSeconds', 'mode', 'readySpreadMs', 'createdMs', 'lines')
if not cfg[1] then return {-1} end
local lines = parseLines(cfg[9]) -- LINES
local nl = math.max(#lines, 1)
local rate = tonumber(cfg[1])
local maxActive = tonumber(cfg[2]) or 0
local ttl = tonumber(cfg[3]) or 300
local paused = stopped(cfg[4], cfg[1]) -- ADAPT: a rate of 0 too
local soldout = redis.call('EXISTS', K.soldout) == 1
local abandon = (tonumber(cfg[5]) or 0) * 1000000
local ret = returnUs() -- ABSENCE
-- Passthrough, the no-room baseline: everyone waiting is admitted at the
-- next tick, up to the tokens given.
local passthrough = cfg[6] == 'passthrough'
local tickSec = tonumber(ARGV[2])
local burst = math.ceil(rate * tickSec - 1e-9)
if burst < 1 then burst = 1 end
local now = nowUs()
local nowMs = math.floor(now / 1000)
-- DRAW: the schedule gates admission: none before the pre-queue is drawn,
-- none in mode closed, none after closing unless the line is still served.
-- The first tick past opening freezes the pre-queue for the draw. In mode
-- random each tick admits uniformly at random among the waiting: each pick
-- is a place in line drawn from the caller's seed. (ZRANDMEMBER is not
-- uniform once the line outgrows a listpack: its hash-table sampling
-- favours the members that joined last.)
local ph, sc = phaseNow(nowMs)
local gated = admitsNone(ph, sc)
local random = cfg[6] == 'random'
if random then math.randomseed(tonumber(ARGV[3])) end
local ACTIVE = K.active

-- Credit: rate × elapsed since the last tick of any instance, so N
-- instances admit what one would. After an idle spell (the line was empty
-- at the last tick) credit is capped at one batch plus one: the first tick
-- admits at most one batch. While the line is backlogged the cap is two
-- batches plus one, so a tick that runs up to one tick late (a busy
-- instance, a GC pause) catches up instead of losing admissions; a longer
-- stall loses the credit beyond that. The fraction carried between ticks
-- is never lost.
-- Spread: the catch-up goes out at no more than a fifth over the rate. A
-- tick admits at most ceil(1.2 × batch), and the ticks of any window of
-- max(tick, 1 s) admit at most ceil(1.2 × rate × window) together: the
-- recent ticks of every instance are kept in 'recent' ("us:n," each) and a
-- tick admits what they left of it. What a tick may not admit stays as
-- credit for the next ones, so the long-run total is still rate × elapsed.
-- A tick older than the window less a tenth of a tick (at most 100 ms)
-- no longer counts, so that ticks that run slightly early keep their
-- batch.
local st = redis.call('HMGET', K.rate, 'ts', 'credit', 'ewma', 'wts', 'wn', 'wsat', 'backlog', 'recent', 'held', 'lc')
local ts = tonumber(st[1]) or now
local credit = tonumber(st[2]) or 0
local backlog = st[7] == '1'
local elapsed = now - ts
if elapsed < 0 then elapsed = 0 end
credit = credit + elapsed * rate / 1000000
local most = burst
if backlog then most = 2 * burst end
local SPREAD, MAX_RECENT = 1.2, 256
local windowUs = math.max(tickSec, 1) * 1000000
local since = now - windowUs + math.min(tickSec, 1) * 100000
local windowCap = math.ceil(SPREAD * rate * windowUs / 1000000 - 1e-9)
-- Credit the spread held back at the last tick is owed, not a stall's:
-- the cap keeps it (up to one window's worth) while the line is backlogged.
local held = 0
if backlog then held = math.min(tonumber(st[9]) or 0, windowCap) end
if credit > most + 1 + held then credit = most + 1 + held end
local tickCap = math.ceil(SPREAD * burst - 1e-9)
local recent, recentN = {}, 0
for at, k in string.gmatch(st[8] or '', '(%d+):(%d+),') do
  at, k = tonumber(at), tonumber(k)
  if at > since and at <= now then
    recent[#recent + 1] = I(at) .. ':' .. I(k) .. ','
    recentN = recentN + k
  end
end

-- Passes past their expiry leave the active set and count as expired; a
-- bounded batch per tick (the slot count below ignores any left over).
-- GATE: sessions past their expiry (idle, or at the end of a fixed one)
-- end as sessionsIdle. Consumed passes' tombstones go at their own expiry,
-- and pass ids (jti) with the passes.
local SWEEP = 1000
local gone = redis.call('ZRANGEBYSCORE', ACTIVE, '-inf', nowMs, 'WITHSCORES', 'LIMIT', 0, SWEEP)
if #gone > 0 then
  local passes = {}
  for i = 1, #gone, 2 do
    if isSession(gone[i]) then
      dropSession(string.sub(gone[i], 3), tonumber(gone[i + 1]), 'sessionsIdle')
    else
      passes[#passes + 1] = gone[i]
    end
  end
  if #passes > 0 then
    redis.call('HDEL', K.tokens, unpack(passes))
    redis.call('ZREM', ACTIVE, unpack(passes))
    redis.call('HINCRBY', K.counts, 'expired', #passes)
    noteHolds(#passes, #passes * ttl * 1000) -- ABSENCE: an unused pass held its slot for its TTL
    forgetJtis(passes)
  end
end
local used = redis.call('ZRANGEBYSCORE', K.done, '-inf', nowMs, 'LIMIT', 0, SWEEP)
if #used > 0 then
  local dropped = {}
  for i = 1, #used do
    local e = getPass(used[i])
    if e and e.s == 'U' then
      redis.call('HDEL', K.tokens, used[i])
      dropped[#dropped + 1] = used[i]
    end
  end
  redis.call('ZREM', K.done, unpack(used))
  forgetJtis(dropped)
end
local n = math.floor(credit + 1e-9)
if n > most + held then n = most + held end
local unspread = n
if n > tickCap then n = tickCap end
if n > windowCap - recentN then n = math.max(windowCap - recentN, 0) end
held = unspread - n
if passthrough then n = #ARGV - 3 end
if paused or soldout or gated then n = 0 end
if n > #ARGV - 3 then n = #ARGV - 3 end
if maxActive > 0 and not passthrough then
  local free = maxActive - redis.call('ZCOUNT', ACTIVE, '(' .. I(nowMs), '+inf')
  if n > free then n = free end
end

local admitted = {}
local abandoned = 0
local heads = {} -- LINES: each line's head, as its pops move it
-- admitOne admits v, whose ticket in the bound line's keys is ticket
-- (cbase: that line's campaign base).
local function admitOne(v, ticket, cbase)
  admitted[#admitted + 1] = v
  -- An expired pass of this visitor that the sweep has not reached yet
  -- ends here, counted once; a tombstone is replaced.
  if redis.call('ZREM', ACTIVE, v) == 1 then
    redis.call('HINCRBY', K.counts, 'expired', 1)
    noteHolds(1, ttl * 1000)
  end
  redis.call('ZREM', K.done, v)
  local x = nowMs + ttl * 1000
  putPass(v, {t = ARGV[3 + #admitted], s = 'R', n = ticket, x = x, c = 0, h = '-', f = 0, p = 0})
  redis.call('ZADD', ACTIVE, I(x), v)
  admitCampaign(v, ticket, cbase)
end
-- popLine admits up to want visitors of line i and returns how many.
local function popLine(i, want)
  useLine(i)
  local Q = K.queue
  local base, cbase = seenBase(), campBase()
  local head = heads[i] or tonumber(redis.call('GET', K.head)) or 0
  local got = #admitted
  local function left() return want - (#admitted - got) end
  -- ABSENCE: passed-over visitors who came back go first, inside the same
  -- credit and slots; their tickets are behind the head already.
  if want > 0 then
    local back = redis.call('ZPOPMIN', K.back, want)
    for j = 1, #back, 2 do admitOne(back[j], tonumber(back[j + 1]), cbase) end
  end
  -- Abandoned visitors found at the front depart instead of taking an
  -- admission; a few more rounds fill their places.
  for _ = 1, 8 do
    local need = left()
    if need <= 0 then break end
    local popped
    if random then
      popped = {}
      local size = redis.call('ZCARD', Q)
      for _ = 1, math.min(need, size) do
        local at = math.random(size) - 1
        local one = redis.call('ZRANGE', Q, at, at, 'WITHSCORES')
        redis.call('ZREM', Q, one[1])
        popped[#popped + 1] = one[1]
        popped[#popped + 1] = one[2]
        size = size - 1
      end
    else
      popped = redis.call('ZPOPMIN', Q, need)
    end
    if #popped == 0 then break end
    for j = 1, #popped, 2 do
      local v = popped[j]
      local ticket = tonumber(popped[j + 1])
      if random then
        -- Admitted out of order: a departure above the head for the ranks.
        if ticket > head and redis.call('ZADD', K.departed, I(ticket), I(ticket)) == 1 then
          redis.call('RPUSH', K.departing, I(ticket))
        end
      elseif ticket > head then
        head = ticket
      end
      if alive(ticket, now, abandon, base) then
        admitOne(v, ticket, cbase)
      elseif lapsed(ticket, now, abandon, ret, base) then
        redis.call('ZADD', Q, I(ticket), v) -- depart() records it properly
        depart(v, ticket, 'abandoned')
        abandoned = abandoned + 1
      else
        -- ABSENCE: away at their turn, within the return window: passed
        -- over, kept aside until the window (from when last seen) ends.
        passOver(v, ticket, nowMs + math.floor((ret - unseenUs(ticket, now, base)) / 1000), cbase)
      end
    end
  end
  heads[i] = head
  return #admitted - got
end

-- LINES: splitCredit splits the tick's n admissions between the lines
-- that have anyone waiting (demand), by their shares among them. Each
-- line carries the fraction it was owed ('lc' in K.rate, one number per
-- line), so that over many ticks every line gets its share exactly; a
-- line with nobody waiting carries nothing. The parts add up to n.
local lc = {}
for x in string.gmatch(st[10] or '', '[^ ]+') do lc[#lc + 1] = tonumber(x) or 0 end
local demand, live, share = {}, {}, {}
local function splitCredit(n)
  local quota, sum, k, carried = {}, 0, 0, 0
  for i = 1, nl do
    useLine(i)
    demand[i] = redis.call('ZCARD', K.queue) + redis.call('ZCARD', K.back)
    quota[i] = 0
    lc[i] = lc[i] or 0
    if demand[i] > 0 then
      live[#live + 1] = i
      sum = sum + lines[i].share
      carried = carried + lc[i]
    else
      lc[i] = 0
    end
  end
  if sum <= 0 then return quota end
  local total = 0
  for _, i in ipairs(live) do
    share[i] = lines[i].share / sum
    lc[i] = lc[i] - carried / #live + n * share[i]
    quota[i] = math.max(math.floor(lc[i] + 1e-9), 0)
    total = total + quota[i]
  end
  while total < n do
    local best
    for _, i in ipairs(live) do
      if not best or lc[i] - quota[i] > lc[best] - quota[best] then best = i end
    end
    quota[best] = quota[best] + 1
    total = total + 1
  end
  while total > n do
    local worst
    for _, i in ipairs(live) do
      if quota[i] > 0 and (not worst or lc[i] - quota[i] < lc[worst] - quota[worst]) then worst = i end
    end
    quota[worst] = quota[worst] - 1
    total = total - 1
  end
  for _, i in ipairs(live) do lc[i] = lc[i] - quota[i] end
  return quota
end

if #lines == 0 then
  popLine(1, n)
else
  local quota = splitCredit(n)
  local dry = {}
  for i = 1, nl do
    if quota[i] > 0 and popLine(i, quota[i]) < quota[i] then dry[i] = true end
  end
  -- What a line could not use goes to the others, in their order.
  for _, i in ipairs(live) do
    local rest = n - #admitted
    if rest <= 0 then break end
    if not dry[i] then popLine(i, rest) end
  end
end
if #admitted > 0 then
  credit = credit - #admitted
  if not passthrough then
    if #recent >= MAX_RECENT then table.remove(recent, 1) end
    recent[#recent + 1] = I(now) .. ':' .. I(#admitted) .. ','
  end
  redis.call('HINCRBY', K.counts, 'admitted', #admitted)
  forgetJtis(admitted) -- GATE: the pass ids of the passes just replaced
end

-- tidyLine ends the tick for line i: it stores its head, sweeps it for
-- the abandoned and drops what lies behind the head. It returns the
-- line's waiting count.
local function tidyLine(i)
  useLine(i)
  local Q = K.queue
  local base, cbase = seenBase(), campBase()
  local head = heads[i] or tonumber(redis.call('GET', K.head)) or 0
  if random then
    -- The head moves up to the lowest ticket still waiting.
    local low = redis.call('ZRANGE', Q, 0, 0, 'WITHSCORES')
    local h = (tonumber(low[2]) or ((tonumber(redis.call('GET', K.seq)) or 0) + 1)) - 1
    if h > head then head = h end
  end
  redis.call('SET', K.head, I(head))
  heads[i] = head

  -- ABSENCE: passed-over visitors whose return window ended depart as
  -- abandoned. Their tickets are behind the head: no rank changes.
  local lost = redis.call('ZRANGEBYSCORE', K.away, '-inf', nowMs, 'LIMIT', 0, SWEEP)
  if #lost > 0 then
    redis.call('ZREM', K.away, unpack(lost))
    redis.call('HDEL', K.awaytk, unpack(lost))
    redis.call('HDEL', K.campof, unpack(lost))
    redis.call('HINCRBY', K.counts, 'abandoned', #lost)
  end

  -- Sweep part of the line for abandoned visitors, from a cursor that wraps,
  -- so that everyone's rank drops as soon as someone ahead has gone.
  local waiting = redis.call('ZCARD', Q)
  if abandon > 0 and waiting > 0 then
    local k = math.ceil(waiting * tickSec * 4000000 / abandon)
    if k < 200 then k = 200 end
    if k > 5000 then k = 5000 end
    local cursor = tonumber(redis.call('GET', K.sweep)) or 0
    local batch = redis.call('ZRANGEBYSCORE', Q, '(' .. I(cursor), '+inf', 'WITHSCORES', 'LIMIT', 0, k)
    for i = 1, #batch, 2 do
      local ticket = tonumber(batch[i + 1])
      if lapsed(ticket, now, abandon, ret, base) then
        depart(batch[i], ticket, 'abandoned')
        abandoned = abandoned + 1
      end
      cursor = ticket
    end
    if #batch < 2 * k then cursor = 0 end
    redis.call('SET', K.sweep, I(cursor))
    waiting = redis.call('ZCARD', Q)
  end
  redis.call('ZREMRANGEBYSCORE', K.departed, '-inf', I(head))

  -- The liveness cells behind the head are dead: once they are at least a
  -- chunk and at least as many as the live ones, drop them in one copy, so
  -- the string stays bounded by the line and the cost per ticket constant.
  local SEEN_CHUNK = 65536
  local dead = head - base
  if dead >= SEEN_CHUNK and dead >= (tonumber(redis.call('GET', K.seq)) or 0) - head then
    local rest = redis.call('GETRANGE', K.seen, 2 * dead, -1)
    if #rest > 0 then redis.call('SET', K.seen, rest) else redis.call('DEL', K.seen) end
    redis.call('SET', K.seenbase, I(head))
  end
  -- ATTRIBUTION: the campaign cells behind the head go the same way.
  dead = head - cbase
  if dead >= SEEN_CHUNK and dead >= (tonumber(redis.call('GET', K.seq)) or 0) - head then
    local rest = redis.call('GETRANGE', K.camp, 2 * dead, -1)
    if #rest > 0 then redis.call('SET', K.camp, rest) else redis.call('DEL', K.camp) end
    redis.call('SET', K.campbase, I(head))
  end
  return waiting
end
local waiting, lineWaiting = 0, {}
for i = 1, nl do
  lineWaiting[i] = tidyLine(i)
  waiting = waiting + lineWaiting[i]
end
useLine(1)
local head = heads[1] or tonumber(redis.call('GET', K.head)) or 0
local active = redis.call('ZCOUNT', ACTIVE, '(' .. I(nowMs), '+inf')

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
  'backlog', (waiting > 0 and not paused and not soldout) and '1' or '0', 'recent', table.concat(recent), 'held', I(held),
  'tk', I(tickSec * 1000000)}
if #lines > 0 then
  local t = {}
  for i = 1, nl do t[i] = string.format('%.6f', lc[i] or 0) end
  fields[#fields + 1] = 'lc'
  fields[#fields + 1] = table.concat(t, ' ')
end
if ewma then
  fields[#fields + 1] = 'ewma'
  fields[#fields + 1] = string.format('%.4f', ewma)
end
-- ABSENCE: fold this tick's slot releases into the mean hold time.
local hs = redis.call('HMGET', K.rate, 'hold', 'holdn', 'holdms')
local hn = tonumber(hs[2]) or 0
if hn > 0 then
  local sample = (tonumber(hs[3]) or 0) / hn / 1000
  local hold = tonumber(hs[1])
  if hold then hold = hold + (1 - 0.95 ^ hn) * (sample - hold) else hold = sample end
  fields[#fields + 1] = 'hold'
  fields[#fields + 1] = string.format('%.4f', hold)
  fields[#fields + 1] = 'holdn'
  fields[#fields + 1] = '0'
  fields[#fields + 1] = 'holdms'
  fields[#fields + 1] = '0'
end
redis.call('HSET', K.rate, unpack(fields))

-- One event per tick. Visitor ids are base64url, tickets integers: the JSON
-- needs no escaping. Tokens never go on the channel.
local tick = redis.call('INCR', K.tick)
local dep = redis.call('LRANGE', K.departing, 0, -1)
if #dep > 0 then redis.call('DEL', K.departing) end
local a = '[]'
if #admitted > 0 then a = '["' .. table.concat(admitted, '","') .. '"]' end
local r = achievable(rate, maxActive, ttl) -- ABSENCE: the ETA's throughput (none if gated)
if gated then r = 0 end
local slots = slotSchedule(rate, maxActive, ttl, nowMs) -- and when slots free
if slots ~= '' then slots = ',"S":' .. slots end
-- The room's spread of its turns, in ms; none: the server's default.
local rs = tonumber(cfg[7])
if rs then rs = ',"rs":' .. I(rs) else rs = '' end
-- Mode random: everyone's rank falls at their share of the rate.
if cfg[6] == 'random' then rs = rs .. ',"rm":1' end
-- LINES: each line's head, departures, waiting and the throughput its
-- share gets among the lines with anyone waiting (itself counted).
local anyDep = #dep > 0
if #lines > 0 then
  local sum = 0
  for _, i in ipairs(live) do sum = sum + lines[i].share end
  local ls = {}
  for i = 1, nl do
    useLine(i)
    local d = dep
    if i > 1 then
      d = redis.call('LRANGE', K.departing, 0, -1)
      if #d > 0 then
        redis.call('DEL', K.departing)
        anyDep = true
      end
    end
    local s = sum
    if (demand[i] or 0) == 0 then s = s + lines[i].share end
    local lr = 0
    if s > 0 then lr = r * lines[i].share / s end
    ls[i] = '{"h":' .. I(heads[i]) .. ',"w":' .. I(lineWaiting[i]) .. ',"r":' .. string.format('%.4f', lr) ..
      ',"d":[' .. table.concat(d, ',') .. ']}'
  end
  useLine(1)
  rs = rs .. ',"L":[' .. table.concat(ls, ',') .. ']'
end
redis.call('PUBLISH', CHANNEL, '{"n":' .. I(tick) .. ',"h":' .. I(head) .. ',"t":' .. I(now) ..
  ',"w":' .. I(waiting) .. ',"r":' .. string.format('%.4f', r) .. ',"p":' .. (paused and '1' or '0') .. slots ..
  ',"s":' .. (soldout and '1' or '0') .. ',"a":' .. a .. ',"d":[' .. table.concat(dep, ',') .. ']' ..
  ',"ph":"' .. (ph == 'drawing' and 'prequeue' or ph) .. '","pq":' .. I(sc[1]) .. ',"op":' .. I(sc[2]) .. ',"cl":' .. I(sc[3]) .. rs ..
  ',"c":' .. (tonumber(cfg[8]) and I(tonumber(cfg[8])) or '0') .. '}')

-- IDLE: quiet after this tick, the room sleeps until its schedule's next
-- change, if any (see wake in lib.lua).
local asleep, wakeAt = 0, 0
if waiting == 0 and #admitted == 0 and not anyDep and ph ~= 'drawing' and redis.call('ZCARD', K.done) == 0 and quiet() then
  asleep = 1
  for i = 1, 3 do
    local at = tonumber(sc[i]) or 0
    if at > nowMs and (wakeAt == 0 or at < wakeAt) then wakeAt = at end
  end
  redis.call('HSET', K.rate, 'asleep', '1', 'wakeAt', I(wakeAt))
  if wakeAt > 0 then wakeAt = wakeAt - nowMs end
elseif sleep[1] then
  redis.call('HDEL', K.rate, 'asleep', 'wakeAt') -- its wakeAt came
end

local want = 2 * burst
if passthrough then want = math.min(math.max(waiting + 100, 2 * burst), 20000) end
local c = redis.call('HMGET', K.counts, 'leaves', 'abandoned', 'expired', 'sessionsOpened', 'sessionsEnded', 'sessionsIdle')
local reply = {#admitted, head, waiting, want, active, tick, tonumber(c[1]) or 0, tonumber(c[2]) or 0, tonumber(c[3]) or 0, ph,
  cfg[1], redis.call('ZCARD', K.prequeue), paused and 1 or 0, soldout and 1 or 0,
  -- GATE: the sessions (those past their expiry were swept above)
  redis.call('HLEN', K.sessions), tonumber(c[4]) or 0, tonumber(c[5]) or 0, tonumber(c[6]) or 0, asleep, wakeAt}
for i = 1, #admitted do reply[#reply + 1] = admitted[i] end
return reply
