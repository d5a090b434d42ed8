"""The trend page under FP8 lines or an FP8 base says its MFU is against the bf16 peak."""


def test_the_trend_page_says_fp8_mfu_is_against_the_bf16_peak(client):
    q = "model=llama3-8b&dp=8&tp=1&pp=1&hardware=h100-sxm&knob=dp_fixed_microbatch&values=4,8"
    with_fp8 = client.get(f"/trend?{q}&series=fp8")
    assert with_fp8.status_code == 200 and 'id="trend-mfu-fp8"' in with_fp8.text
    assert 'id="trend-mfu-fp8"' not in client.get(f"/trend?{q}&series=none").text
