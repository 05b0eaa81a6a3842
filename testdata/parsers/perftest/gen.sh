#!/usr/bin/env bash
# The row formats are perftest's own format strings, kept in variables as
# perftest keeps them in its headers.
# shellcheck disable=SC2059
# Writes perftest-format fixtures for variants the corpus lacks. No
# perftest can run here (no RDMA device), so these are produced by this
# project: every line is printed with perftest's own format strings
# (src/perftest_parameters.h, linux-rdma/perftest 00b55b6, quoted in
# shared/reference/tools.md §1.4); the figures are invented.
set -euo pipefail
cd "$(dirname "$0")"
L=---------------------------------------------------------------------------------------
hdr() { # title, then key/value pairs printed as perftest's header block
  printf '%s\n' "$L" "                    $1"
  printf ' Dual-port       : OFF\t\tDevice         : rxe0\n'
  printf ' Number of qps   : %s\t\tTransport type : IB\n' "$2"
  printf ' Connection type : RC\t\tUsing SRQ      : OFF\n'
  printf ' PCIe relax order: ON\t\tLock-free      : OFF\n'
  printf ' ibv_wr* API     : ON\t\tUsing Enhanced Reorder      : OFF\n'
  printf ' TX depth        : 1\n Mtu             : 1024[B]\n Link type       : Ethernet\n GID index       : 1\n'
  printf ' Max inline data : 220[B]\n rdma_cm QPs\t : OFF\n Data ex. method : Ethernet\n%s\n' "$L"
  printf ' local address: LID 0000 QPN 0x0011 PSN 0x3c2a1f\n GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:00:00:01\n'
  printf ' remote address: LID 0000 QPN 0x0012 PSN 0x8d11e0\n GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:00:00:02\n%s\n' "$L"
}
LAT_DUR_HDR=' #bytes        #iterations       t_avg[usec]    tps average'
LAT_DUR_ROW=' %-7lu       %lu            %-7.2f        %-7.2f\n'
LAT_HDR=' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec] \n'
LAT_ROW=' %-7lu %lu          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n'
BW_HDR_G=' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]'
BW_ROW=' %-7lu    %-10lu       %-7.2f            %-7.2f\t\t     %-7.6f\n'
BW_ROW_EXT=' %-7lu    %lu           %-7.6f            %-7.6f            %-7.6f\n'

# ib_write_lat -D 5 (duration variant), client side, with the CPU-frequency warning.
{
  hdr "RDMA_Write Latency Test" 1
  printf '%s\n' "$LAT_DUR_HDR"
  printf 'Conflicting CPU frequency values detected: 1200.000000 != 3400.000000. CPU Frequency is not max.\n'
  printf "$LAT_DUR_ROW" 2 1690236 2.96 338047.20
  printf '%s\n' "$L"
} > write_lat_D5_client.txt

# ib_read_lat -a (first sizes), client side, 9-column table.
{
  hdr "RDMA_Read Latency Test" 1
  printf "$LAT_HDR"
  printf "$LAT_ROW" 2 1000 4.12 19.87 4.31 4.40 0.35 5.91 19.87
  printf "$LAT_ROW" 4 1000 4.10 12.02 4.30 4.37 0.29 5.60 12.02
  printf "$LAT_ROW" 8 1000 4.13 10.55 4.30 4.36 0.27 5.33 10.55
  printf '%s\n' "$L"
} > read_lat_a_client.txt

# ib_read_lat server: banner, header, no table (it prints no results).
{
  printf '\n************************************\n* Waiting for client to connect... *\n************************************\n'
  hdr "RDMA_Read Latency Test" 1
} > read_lat_server_no_table.txt

# ib_write_bw -b --report_gbits --report-both: a summed table, then Local and Remote
# results; the first rows use the 6-decimal form (average < 0.1 Gb/s).
{
  hdr "RDMA_Write Bidirectional BW Test" 2
  printf '%s\n' "$BW_HDR_G"
  printf "$BW_ROW_EXT" 2 10000 0.091234 0.090121 5.632563
  printf "$BW_ROW" 65536 10000 48.51 48.40 0.092316
  printf '%s\n' "$L"
  printf '\n Local results: \n%s\n%s\n' "$L" "$BW_HDR_G"
  printf "$BW_ROW" 65536 10000 24.26 24.21 0.046177
  printf '%s\n' "$L"
  printf '\n Remote results: \n%s\n%s\n' "$L" "$BW_HDR_G"
  printf "$BW_ROW" 65536 10000 24.25 24.19 0.046139
  printf '%s\n' "$L"
} > write_bw_bidir_report_both_gbits.txt

# ib_send_bw client whose peer vanished mid-run: rows, then the read failure.
{
  hdr "Send BW Test" 1
  printf ' #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n'
  printf "$BW_ROW" 2 1000 9.71 9.52 4.990081
  printf ' Failed status-%s (%d): wr_id %d syndrom 0x%x\n' "transport retry counter exceeded" 12 0 129
  printf ' scnt=%lu, ccnt=%lu\n' 1000 872
  printf ' Completion with error at client\n'
} > send_bw_completion_error_client.txt

# ib_write_bw --out_json file (REPORT_FMT_JSON), MiB/s.
{
  printf '{\n"test_info": {\n"test": "RDMA_Write_BW_Test",\n"Dual_port": "OFF",\n"Device": "rxe0",\n'
  printf '"Number_of_qps": 1,\n"Transport_type": "IB",\n"Connection_type": "RC",\n"Using_SRQ": "OFF",\n'
  printf '"PCIe_relax_order": "ON",\n"ibv_wr_API": "ON",\n"TX_depth": 128,\n"CQ_Moderation": 100,\n"Mtu": 1024,\n'
  printf '"Link_type": "Ethernet",\n"GID_index": 1,\n"Max_inline_data": 0,\n"rdma_cm_QPs": "OFF",\n'
  printf '"Use_ROCm_memory": "OFF",\n"Use_MUSA_memory": "OFF",\n"Data_ex_method": "Ethernet"\n},\n'
  printf '"results": {\n"MsgSize": %lu,\n"n_iterations": %lu,\n"BW_peak": %.2lf,\n"BW_average": %.2lf,\n"MsgRate": %.6lf\n}\n}\n' \
    65536 5000 1187.44 1185.02 0.018960
} > write_bw_out_json.json
