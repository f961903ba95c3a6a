-- KEYS: cfg soldout
-- sold_out.lua: marks a room sold out (ARGV[2] == "1") or open again. A
-- sold-out room admits nobody and enters nobody; the next tick's event
-- tells every waiting page.
if redis.call('EXISTS', K.cfg) == 0 then return -1 end
if ARGV[2] == '1' then
  redis.call('SET', K.soldout, '1')
else
  redis.call('DEL', K.soldout)
end
return 1
