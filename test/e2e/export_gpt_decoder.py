#!/usr/bin/python3
"""A small GPT-style decoder (2 blocks, 4 heads, causal mask built from
Shape/Range/LessOrEqual/Where) exported to ONNX with dynamic batch and seq,
random init. Used by check_shapes.py (ctest e2e-shapes-gpt_decoder).

    export_gpt_decoder.py --out-dir DIR   ->  DIR/gpt_decoder.onnx
"""
import argparse, os
import torch, torch.nn as nn, math
class Block(nn.Module):
    def __init__(s, d=64, h=4):
        super().__init__(); s.h=h; s.qkv=nn.Linear(d,3*d); s.o=nn.Linear(d,d); s.ln=nn.LayerNorm(d); s.mlp=nn.Sequential(nn.Linear(d,4*d), nn.GELU(), nn.Linear(4*d,d))
    def forward(s, x):
        B,T,C = x.shape
        q,k,v = s.qkv(s.ln(x)).split(C, dim=2)
        q=q.view(B,T,s.h,C//s.h).transpose(1,2); k=k.view(B,T,s.h,C//s.h).transpose(1,2); v=v.view(B,T,s.h,C//s.h).transpose(1,2)
        att = (q @ k.transpose(-2,-1)) / math.sqrt(C//s.h)
        i = torch.arange(T); mask = i[None,:] <= i[:,None]
        att = torch.where(mask, att, torch.full_like(att, -1e9))
        att = att.softmax(-1)
        y = (att @ v).transpose(1,2).contiguous().view(B,T,C)
        x = x + s.o(y)
        return x + s.mlp(x)
class GPT(nn.Module):
    def __init__(s):
        super().__init__(); s.emb=nn.Embedding(100,64); s.pos=nn.Embedding(512,64); s.b=nn.Sequential(Block(),Block()); s.head=nn.Linear(64,100)
    def forward(s, tok):
        T = tok.shape[1]
        x = s.emb(tok) + s.pos(torch.arange(T))[None]
        return s.head(s.b(x))
p=argparse.ArgumentParser(); p.add_argument("--out-dir", required=True); p.add_argument("--no-refs", action="store_true"); a=p.parse_args()
os.makedirs(a.out_dir, exist_ok=True)
torch.manual_seed(0)
m=GPT().eval()
torch.onnx.export(m, torch.zeros(2,8,dtype=torch.long), os.path.join(a.out_dir, "gpt_decoder.onnx"), input_names=["tokens"], output_names=["logits"], dynamic_axes={"tokens":{0:"batch",1:"seq"},"logits":{0:"batch",1:"seq"}}, opset_version=17)
