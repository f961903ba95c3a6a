-- KEYS: cfg soldout rate
-- sold_out.lua: marks a room sold out (ARGV[2] == "1") or open again. A
-- sold-out room admits nobody and enters nobody; the next tick's event
-- tells every waiting page. Returns 1 when the flag changed, 0 when it
-- already was so (of two instances setting it at once, one sees 1), -1
-- for an unknown room. A change wakes a sleeping room (see wake), so that
-- its next tick tells the pages that follow it.
if redis.call('EXISTS', K.cfg) == 0 then return -1 end
local changed = 0
if ARGV[2] == '1' then
  if redis.call('SET', K.soldout, '1', 'NX') then changed = 1 end
else
  changed = redis.call('DEL', K.soldout)
end
if changed == 1 then wake() end
return changed
