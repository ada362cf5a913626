# Hashes, regular expressions and sorting over generated text. The output
# does not depend on hash order: everything printed is sorted first.
use strict;
use warnings;

my @words = qw(alloc free page zone slab order gfp kswapd reclaim compact
	oom watermark highmem dma32 movable nofail noretry atomic kernel user);
my ($x, %count, %pairs, %by_len, @lines) = (42);
for my $i (1 .. 20000) {
	$x = ($x * 1103515245 + 12345) % 2147483648;
	my @w = map { $words[($x >> ($_ * 3)) % @words] } 0 .. ($x % 6);
	my $line = join(' ', @w) . " #$i";
	push @lines, $line;
	$count{$_}++ for @w;
	$pairs{"$w[$_-1]>$w[$_]"}++ for 1 .. $#w;
}
for my $w (keys %count) {
	push @{ $by_len{ length $w } }, $w;
}

my @top = (sort { $count{$b} <=> $count{$a} || $a cmp $b } keys %count)[0 .. 9];
printf "%-10s %6d\n", $_, $count{$_} for @top;

my @top_pairs = (sort { $pairs{$b} <=> $pairs{$a} || $a cmp $b } keys %pairs)[0 .. 9];
print "pair $_ $pairs{$_}\n" for @top_pairs;

print "len $_: ", join(',', sort @{ $by_len{$_} }), "\n" for sort { $a <=> $b } keys %by_len;

my ($matched, %caught) = (0);
for (@lines) {
	next unless /^(\w+)\s+(?:\w+\s+)*?(k\w+|oom)\b.*#(\d*7)$/;
	$matched++;
	$caught{"$1/$2"} += $3;
}
print "matched $matched\n";
print "$_ => $caught{$_}\n" for (sort keys %caught)[0 .. 7];

(my $joined = join("\n", @lines[0 .. 999])) =~ s/\b(g\w+)\b/\U$1/g;
my @upper = $joined =~ /\b([A-Z][A-Z0-9]+)\b/g;
print "uppercased ", scalar(@upper), " words, sum of ids ",
	eval { my $s = 0; $s += $_ for $joined =~ /#(\d+)/g; $s }, "\n";
my @sorted = sort { length($a) <=> length($b) || $b cmp $a } @lines[0 .. 4999];
print "shortest: $sorted[0]\nlongest: $sorted[-1]\n";
