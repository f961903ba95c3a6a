-- KEYS: cfg soldout
-- sold_out.lua: marks a room sold out (ARGV[2] == "1") or open again. A
-- sold-out room admits nobody and enters nobody; the next tick's event
-- tells every waiting page. Returns 1 when the flag changed, 0 when it
-- already was so (of two instances setting it at once, one sees 1), -1
-- for an unknown room.
if redis.call('EXISTS', K.cfg) == 0 then return -1 end
if ARGV[2] == '1' then
  if redis.call('SET', K.soldout, '1', 'NX') then return 1 end
  return 0
end
return redis.call('DEL', K.soldout)
