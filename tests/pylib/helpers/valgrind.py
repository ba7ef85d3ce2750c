"""valgrind memcheck around a daemon, and what its XML report says about our code.

memcheck writes one XML file per process (--xml-file=...%p). An error or leak record is
"ours" when a frame of its stack is in one of our shared objects (the dpdktel_* plugins,
libdpdktel): collectd and the libraries it loads are not ours to fix, but they are printed.
"""
import glob
import os
import xml.etree.ElementTree as ET

LEAKS = ('Leak_DefinitelyLost', 'Leak_IndirectlyLost')


def command(xml_dir):
    return ['valgrind', '--tool=memcheck', '--leak-check=full',
            '--show-leak-kinds=definite,indirect', '--errors-for-leak-kinds=definite,indirect',
            '--num-callers=40', '--xml=yes', f'--xml-file={xml_dir}/memcheck.%p.xml']


class Record:
    def __init__(self, el):
        self.kind = el.findtext('kind')
        what = el.find('xwhat')
        self.what = what.findtext('text') if what is not None else el.findtext('what')
        self.bytes = int(what.findtext('leakedbytes') or 0) if what is not None else 0
        self.frames = [(os.path.basename(f.findtext('obj') or '?'), f.findtext('fn') or '?')
                       for f in el.find('stack').findall('frame')]

    @property
    def ours(self):
        return any('dpdktel' in obj for obj, _ in self.frames)

    def __str__(self):
        stack = '\n'.join(f'    {fn} ({obj})' for obj, fn in self.frames[:12])
        return f'{self.kind}: {self.what}\n{stack}'


class Report:
    def __init__(self, xml_dir):
        paths = glob.glob(os.path.join(xml_dir, 'memcheck.*.xml'))
        assert len(paths) == 1, f'expected one memcheck report in {xml_dir}, found {paths}'
        root = ET.parse(paths[0]).getroot()
        self.records = [Record(e) for e in root.findall('error')]
        self.errors = [r for r in self.records if r.kind not in LEAKS]
        self.leaks = [r for r in self.records if r.kind in LEAKS]

    def our_leaks(self):
        return [r for r in self.leaks if r.ours]

    def our_lost_bytes(self):
        return sum(r.bytes for r in self.our_leaks())

    def other_lost_bytes(self):
        return sum(r.bytes for r in self.leaks if not r.ours)
