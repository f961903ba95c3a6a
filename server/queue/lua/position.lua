-- position.lua: a visitor's place, and (with ARGV[3] == "1") an atomic,
-- idempotent enter. Status is decided by the token first, then the queue.
-- Being asked marks the visitor as seen; a waiting visitor unseen for the
-- room's abandonAfterSeconds has left, and an enter puts them at the end.
-- ARGV: 2 visitor, 3 enter flag ("1" or "0")
-- Reply: {code, ticket, rank, waiting, token, ewma, rate, head, tick, soldout}
--   code: -1 unknown room, 0 NOT_ENTERED, 1 WAITING, 2 READY
-- A sold-out room takes nobody new into the line.
local rate = redis.call('HGET', KEYS[1], 'rate')
if not rate then return {-1, 0, 0, 0, '', '', '', 0, 0, 0} end
local soldout = redis.call('EXISTS', P .. 'soldout')
local v = ARGV[2]
local ewma = redis.call('HGET', P .. 'rate', 'ewma') or ''
local head = tonumber(redis.call('GET', P .. 'head')) or 0
local tick = tonumber(redis.call('GET', P .. 'tick')) or 0
local tok = redis.call('HMGET', P .. 'tok:' .. v, 't', 'n')
if tok[1] then
  return {2, tonumber(tok[2]) or 0, 0, redis.call('ZCARD', P .. 'queue'), tok[1], ewma, rate, head, tick, soldout}
end
local now = nowUs()
local ticket = tonumber(redis.call('ZSCORE', P .. 'queue', v))
if ticket and not alive(ticket, now, abandonUs()) then
  depart(v, ticket)
  ticket = nil
end
if not ticket then
  if ARGV[3] ~= '1' or soldout == 1 then
    return {0, 0, 0, redis.call('ZCARD', P .. 'queue'), '', ewma, rate, head, tick, soldout}
  end
  ticket = redis.call('INCR', P .. 'seq')
  redis.call('ZADD', P .. 'queue', ticket, v)
end
markSeen(ticket, now)
local rank = redis.call('ZRANK', P .. 'queue', v)
return {1, ticket, rank, redis.call('ZCARD', P .. 'queue'), '', ewma, rate, head, tick, soldout}
