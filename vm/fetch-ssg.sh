#!/usr/bin/env bash
# Fetches SCAP Security Guide 0.1.76 from Debian trixie (architecture all): ssg-debian, ssg-base, ssg-nondebian.
# bookworm's SSG 0.1.65 has no Debian 12 datastream. Unpacks them under $VM_DIR/ssg for the host.
source "$(dirname "$0")/lib.sh"
A=$VM_DIR/altapt; OUTD=$VM_DIR/img/debs; SSG=$VM_DIR/ssg
mkdir -p $A/lists/partial $A/cache/archives/partial $OUTD
if [ -f $SSG/.done-$SSG_VERSION ]; then log "ssg $SSG_VERSION present"; exit 0; fi
echo "deb $(mirror) trixie main" > $A/sources.list
O=(-o Dir::Etc::SourceList=$A/sources.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$A/lists -o Dir::Cache=$A/cache)
apt-get "${O[@]}" update -q
rm -f $OUTD/ssg-*.deb
(cd $OUTD && apt-get "${O[@]}" download ssg-debian ssg-base ssg-nondebian)
rm -rf $SSG; mkdir -p $SSG
for d in $OUTD/ssg-*.deb; do
  v=$(dpkg-deb -f $d Version); case $v in $SSG_VERSION-*) ;; *) log "unexpected ssg version $v in $d"; exit 1;; esac
  dpkg-deb -x $d $SSG
done
touch $SSG/.done-$SSG_VERSION
log "ssg unpacked: $(ls $SSG/usr/share/xml/scap/ssg/content | wc -l) files"
