# labctl: QoS read-back (generated). Prints labctl-tm lines only.
c = bfrt.tf1.tm.cfg.get(print_ents=False).data
print('labctl-tm', 'cfg', c[b'cell_size_bytes'], c[b'total_cells'])
print('labctl-tm', 'pool', 'IG_APP_POOL_0', bfrt.tf1.tm.pool.cfg.get(pool='IG_APP_POOL_0', print_ents=False).data[b'size_cells'])
print('labctl-tm', 'pool', 'IG_APP_POOL_1', bfrt.tf1.tm.pool.cfg.get(pool='IG_APP_POOL_1', print_ents=False).data[b'size_cells'])
print('labctl-tm', 'pool', 'EG_APP_POOL_0', bfrt.tf1.tm.pool.cfg.get(pool='EG_APP_POOL_0', print_ents=False).data[b'size_cells'])
print('labctl-tm', 'pool', 'EG_APP_POOL_1', bfrt.tf1.tm.pool.cfg.get(pool='EG_APP_POOL_1', print_ents=False).data[b'size_cells'])
dp = bfrt.port.port_hdl_info.get(CONN_ID=1, CHNL_ID=0, print_ents=False).data[b'$DEV_PORT']
pc = bfrt.tf1.tm.port.cfg.get(dev_port=dp, print_ents=False).data
pt = bfrt.port.port.get(DEV_PORT=dp, print_ents=False).data
fc = bfrt.tf1.tm.port.flowcontrol.get(dev_port=dp, print_ents=False).data
print('labctl-tm', 'port', '1/0', dp, pc[b'pg_id'], pt[b'$TX_PFC_EN_MAP'], pt[b'$RX_PFC_EN_MAP'], fc[b'mode_tx'], fc[b'mode_rx'])
qc = bfrt.tf1.tm.queue.cfg.get(pipe=dp >> 7, pg_id=pc[b'pg_id'], pg_queue=pc[b'egress_qid_queues'][0], print_ents=False).data
qs = bfrt.tf1.tm.queue.sched_cfg.get(pipe=dp >> 7, pg_id=pc[b'pg_id'], pg_queue=pc[b'egress_qid_queues'][0], print_ents=False).data
print('labctl-tm', 'queue', '1/0', 0, pc[b'egress_qid_queues'][0], qc[b'pfc_cos'], qs[b'max_priority'], qs[b'dwrr_weight'])
qc = bfrt.tf1.tm.queue.cfg.get(pipe=dp >> 7, pg_id=pc[b'pg_id'], pg_queue=pc[b'egress_qid_queues'][1], print_ents=False).data
qs = bfrt.tf1.tm.queue.sched_cfg.get(pipe=dp >> 7, pg_id=pc[b'pg_id'], pg_queue=pc[b'egress_qid_queues'][1], print_ents=False).data
print('labctl-tm', 'queue', '1/0', 1, pc[b'egress_qid_queues'][1], qc[b'pfc_cos'], qs[b'max_priority'], qs[b'dwrr_weight'])
qc = bfrt.tf1.tm.queue.cfg.get(pipe=dp >> 7, pg_id=pc[b'pg_id'], pg_queue=pc[b'egress_qid_queues'][2], print_ents=False).data
qs = bfrt.tf1.tm.queue.sched_cfg.get(pipe=dp >> 7, pg_id=pc[b'pg_id'], pg_queue=pc[b'egress_qid_queues'][2], print_ents=False).data
print('labctl-tm', 'queue', '1/0', 2, pc[b'egress_qid_queues'][2], qc[b'pfc_cos'], qs[b'max_priority'], qs[b'dwrr_weight'])
qc = bfrt.tf1.tm.queue.cfg.get(pipe=dp >> 7, pg_id=pc[b'pg_id'], pg_queue=pc[b'egress_qid_queues'][3], print_ents=False).data
qs = bfrt.tf1.tm.queue.sched_cfg.get(pipe=dp >> 7, pg_id=pc[b'pg_id'], pg_queue=pc[b'egress_qid_queues'][3], print_ents=False).data
print('labctl-tm', 'queue', '1/0', 3, pc[b'egress_qid_queues'][3], qc[b'pfc_cos'], qs[b'max_priority'], qs[b'dwrr_weight'])
qc = bfrt.tf1.tm.queue.cfg.get(pipe=dp >> 7, pg_id=pc[b'pg_id'], pg_queue=pc[b'egress_qid_queues'][4], print_ents=False).data
qs = bfrt.tf1.tm.queue.sched_cfg.get(pipe=dp >> 7, pg_id=pc[b'pg_id'], pg_queue=pc[b'egress_qid_queues'][4], print_ents=False).data
print('labctl-tm', 'queue', '1/0', 4, pc[b'egress_qid_queues'][4], qc[b'pfc_cos'], qs[b'max_priority'], qs[b'dwrr_weight'])
qc = bfrt.tf1.tm.queue.cfg.get(pipe=dp >> 7, pg_id=pc[b'pg_id'], pg_queue=pc[b'egress_qid_queues'][5], print_ents=False).data
qs = bfrt.tf1.tm.queue.sched_cfg.get(pipe=dp >> 7, pg_id=pc[b'pg_id'], pg_queue=pc[b'egress_qid_queues'][5], print_ents=False).data
print('labctl-tm', 'queue', '1/0', 5, pc[b'egress_qid_queues'][5], qc[b'pfc_cos'], qs[b'max_priority'], qs[b'dwrr_weight'])
qc = bfrt.tf1.tm.queue.cfg.get(pipe=dp >> 7, pg_id=pc[b'pg_id'], pg_queue=pc[b'egress_qid_queues'][6], print_ents=False).data
qs = bfrt.tf1.tm.queue.sched_cfg.get(pipe=dp >> 7, pg_id=pc[b'pg_id'], pg_queue=pc[b'egress_qid_queues'][6], print_ents=False).data
print('labctl-tm', 'queue', '1/0', 6, pc[b'egress_qid_queues'][6], qc[b'pfc_cos'], qs[b'max_priority'], qs[b'dwrr_weight'])
qc = bfrt.tf1.tm.queue.cfg.get(pipe=dp >> 7, pg_id=pc[b'pg_id'], pg_queue=pc[b'egress_qid_queues'][7], print_ents=False).data
qs = bfrt.tf1.tm.queue.sched_cfg.get(pipe=dp >> 7, pg_id=pc[b'pg_id'], pg_queue=pc[b'egress_qid_queues'][7], print_ents=False).data
print('labctl-tm', 'queue', '1/0', 7, pc[b'egress_qid_queues'][7], qc[b'pfc_cos'], qs[b'max_priority'], qs[b'dwrr_weight'])
try:
    g = bfrt.tf1.tm.ppg.cfg.get(pipe=dp >> 7, ppg_id=1, print_ents=False).data
    print('labctl-tm', 'ppg', '1/0', 1, g[b'dev_port'], g[b'pfc_enable'], g[b'pfc_skid_max_cells'], g[b'icos_0'], g[b'icos_1'], g[b'icos_2'], g[b'icos_3'], g[b'icos_4'], g[b'icos_5'], g[b'icos_6'], g[b'icos_7'], g[b'guaranteed_cells'], g[b'hysteresis_cells'], g[b'pool_id'], g[b'pool_max_cells'], g[b'dynamic_baf'])
except Exception:
    print('labctl-tm', 'ppg', '1/0', 1, 'absent')
try:
    e = bfrt.labctl.pipe.SwitchEgress.ecn_red.get(qid=0, print_ents=False).data
    print('labctl-tm', 'ecn', 0, e[b'kmin_cells'], e[b'kmax_cells'], e[b'pmax_percent'])
except Exception:
    print('labctl-tm', 'ecn', 0, 'absent')
try:
    e = bfrt.labctl.pipe.SwitchEgress.ecn_red.get(qid=1, print_ents=False).data
    print('labctl-tm', 'ecn', 1, e[b'kmin_cells'], e[b'kmax_cells'], e[b'pmax_percent'])
except Exception:
    print('labctl-tm', 'ecn', 1, 'absent')
try:
    e = bfrt.labctl.pipe.SwitchEgress.ecn_red.get(qid=2, print_ents=False).data
    print('labctl-tm', 'ecn', 2, e[b'kmin_cells'], e[b'kmax_cells'], e[b'pmax_percent'])
except Exception:
    print('labctl-tm', 'ecn', 2, 'absent')
try:
    e = bfrt.labctl.pipe.SwitchEgress.ecn_red.get(qid=3, print_ents=False).data
    print('labctl-tm', 'ecn', 3, e[b'kmin_cells'], e[b'kmax_cells'], e[b'pmax_percent'])
except Exception:
    print('labctl-tm', 'ecn', 3, 'absent')
try:
    e = bfrt.labctl.pipe.SwitchEgress.ecn_red.get(qid=4, print_ents=False).data
    print('labctl-tm', 'ecn', 4, e[b'kmin_cells'], e[b'kmax_cells'], e[b'pmax_percent'])
except Exception:
    print('labctl-tm', 'ecn', 4, 'absent')
try:
    e = bfrt.labctl.pipe.SwitchEgress.ecn_red.get(qid=5, print_ents=False).data
    print('labctl-tm', 'ecn', 5, e[b'kmin_cells'], e[b'kmax_cells'], e[b'pmax_percent'])
except Exception:
    print('labctl-tm', 'ecn', 5, 'absent')
try:
    e = bfrt.labctl.pipe.SwitchEgress.ecn_red.get(qid=6, print_ents=False).data
    print('labctl-tm', 'ecn', 6, e[b'kmin_cells'], e[b'kmax_cells'], e[b'pmax_percent'])
except Exception:
    print('labctl-tm', 'ecn', 6, 'absent')
try:
    e = bfrt.labctl.pipe.SwitchEgress.ecn_red.get(qid=7, print_ents=False).data
    print('labctl-tm', 'ecn', 7, e[b'kmin_cells'], e[b'kmax_cells'], e[b'pmax_percent'])
except Exception:
    print('labctl-tm', 'ecn', 7, 'absent')
try:
    print('labctl-tm', 'dscp', 0, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=0, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 0, 'absent')
try:
    print('labctl-tm', 'dscp', 1, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=1, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 1, 'absent')
try:
    print('labctl-tm', 'dscp', 2, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=2, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 2, 'absent')
try:
    print('labctl-tm', 'dscp', 3, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=3, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 3, 'absent')
try:
    print('labctl-tm', 'dscp', 4, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=4, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 4, 'absent')
try:
    print('labctl-tm', 'dscp', 5, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=5, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 5, 'absent')
try:
    print('labctl-tm', 'dscp', 6, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=6, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 6, 'absent')
try:
    print('labctl-tm', 'dscp', 7, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=7, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 7, 'absent')
try:
    print('labctl-tm', 'dscp', 8, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=8, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 8, 'absent')
try:
    print('labctl-tm', 'dscp', 9, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=9, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 9, 'absent')
try:
    print('labctl-tm', 'dscp', 10, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=10, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 10, 'absent')
try:
    print('labctl-tm', 'dscp', 11, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=11, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 11, 'absent')
try:
    print('labctl-tm', 'dscp', 12, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=12, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 12, 'absent')
try:
    print('labctl-tm', 'dscp', 13, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=13, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 13, 'absent')
try:
    print('labctl-tm', 'dscp', 14, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=14, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 14, 'absent')
try:
    print('labctl-tm', 'dscp', 15, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=15, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 15, 'absent')
try:
    print('labctl-tm', 'dscp', 16, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=16, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 16, 'absent')
try:
    print('labctl-tm', 'dscp', 17, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=17, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 17, 'absent')
try:
    print('labctl-tm', 'dscp', 18, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=18, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 18, 'absent')
try:
    print('labctl-tm', 'dscp', 19, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=19, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 19, 'absent')
try:
    print('labctl-tm', 'dscp', 20, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=20, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 20, 'absent')
try:
    print('labctl-tm', 'dscp', 21, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=21, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 21, 'absent')
try:
    print('labctl-tm', 'dscp', 22, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=22, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 22, 'absent')
try:
    print('labctl-tm', 'dscp', 23, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=23, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 23, 'absent')
try:
    print('labctl-tm', 'dscp', 24, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=24, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 24, 'absent')
try:
    print('labctl-tm', 'dscp', 25, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=25, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 25, 'absent')
try:
    print('labctl-tm', 'dscp', 26, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=26, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 26, 'absent')
try:
    print('labctl-tm', 'dscp', 27, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=27, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 27, 'absent')
try:
    print('labctl-tm', 'dscp', 28, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=28, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 28, 'absent')
try:
    print('labctl-tm', 'dscp', 29, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=29, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 29, 'absent')
try:
    print('labctl-tm', 'dscp', 30, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=30, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 30, 'absent')
try:
    print('labctl-tm', 'dscp', 31, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=31, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 31, 'absent')
try:
    print('labctl-tm', 'dscp', 32, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=32, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 32, 'absent')
try:
    print('labctl-tm', 'dscp', 33, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=33, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 33, 'absent')
try:
    print('labctl-tm', 'dscp', 34, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=34, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 34, 'absent')
try:
    print('labctl-tm', 'dscp', 35, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=35, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 35, 'absent')
try:
    print('labctl-tm', 'dscp', 36, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=36, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 36, 'absent')
try:
    print('labctl-tm', 'dscp', 37, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=37, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 37, 'absent')
try:
    print('labctl-tm', 'dscp', 38, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=38, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 38, 'absent')
try:
    print('labctl-tm', 'dscp', 39, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=39, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 39, 'absent')
try:
    print('labctl-tm', 'dscp', 40, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=40, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 40, 'absent')
try:
    print('labctl-tm', 'dscp', 41, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=41, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 41, 'absent')
try:
    print('labctl-tm', 'dscp', 42, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=42, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 42, 'absent')
try:
    print('labctl-tm', 'dscp', 43, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=43, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 43, 'absent')
try:
    print('labctl-tm', 'dscp', 44, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=44, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 44, 'absent')
try:
    print('labctl-tm', 'dscp', 45, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=45, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 45, 'absent')
try:
    print('labctl-tm', 'dscp', 46, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=46, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 46, 'absent')
try:
    print('labctl-tm', 'dscp', 47, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=47, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 47, 'absent')
try:
    print('labctl-tm', 'dscp', 48, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=48, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 48, 'absent')
try:
    print('labctl-tm', 'dscp', 49, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=49, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 49, 'absent')
try:
    print('labctl-tm', 'dscp', 50, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=50, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 50, 'absent')
try:
    print('labctl-tm', 'dscp', 51, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=51, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 51, 'absent')
try:
    print('labctl-tm', 'dscp', 52, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=52, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 52, 'absent')
try:
    print('labctl-tm', 'dscp', 53, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=53, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 53, 'absent')
try:
    print('labctl-tm', 'dscp', 54, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=54, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 54, 'absent')
try:
    print('labctl-tm', 'dscp', 55, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=55, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 55, 'absent')
try:
    print('labctl-tm', 'dscp', 56, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=56, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 56, 'absent')
try:
    print('labctl-tm', 'dscp', 57, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=57, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 57, 'absent')
try:
    print('labctl-tm', 'dscp', 58, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=58, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 58, 'absent')
try:
    print('labctl-tm', 'dscp', 59, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=59, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 59, 'absent')
try:
    print('labctl-tm', 'dscp', 60, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=60, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 60, 'absent')
try:
    print('labctl-tm', 'dscp', 61, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=61, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 61, 'absent')
try:
    print('labctl-tm', 'dscp', 62, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=62, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 62, 'absent')
try:
    print('labctl-tm', 'dscp', 63, bfrt.labctl.pipe.SwitchIngress.dscp_tc.get(dscp=63, print_ents=False).data[b'tc'])
except Exception:
    print('labctl-tm', 'dscp', 63, 'absent')
print('labctl-tm', 'end')
