import sys, math, collections
def read(p):
    lab={}
    for c,line in enumerate(open(p)):
        for x in line.split():
            lab[x]=c
    return lab
a=read(sys.argv[1]); b=read(sys.argv[2])
nodes=set(a)|set(b)
# nodes missing in one: own singletons
ka={};kb={}
for x in nodes:
    ka[x]=a.get(x,('s',x)); kb[x]=b.get(x,('s',x))
n=len(nodes)
ca=collections.Counter(ka.values()); cb=collections.Counter(kb.values())
cab=collections.Counter((ka[x],kb[x]) for x in nodes)
ha=-sum(c/n*math.log(c/n) for c in ca.values())
hb=-sum(c/n*math.log(c/n) for c in cb.values())
mi=sum(c/n*math.log((c/n)/((ca[i]/n)*(cb[j]/n))) for (i,j),c in cab.items())
nmi=2*mi/(ha+hb) if ha+hb>0 else 1.0
print(f"{nmi:.4f} {len(ca)} {len(cb)} {max(ca.values())} {max(cb.values())}")
