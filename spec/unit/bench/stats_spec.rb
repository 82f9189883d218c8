# frozen_string_literal: true

require_relative '../../../bench/lib/clone_army_bench/stats'

describe CloneArmyBench::Stats do
  describe '.median' do
    it 'is the middle run of an odd count, whatever order they ran in' do
      expect(described_class.median(['22.168', '13.427', '16.923', '20.119', '13.547'])).to eq(16.923)
    end

    it 'is the mean of the middle two of an even count, not the lower one' do
      expect(described_class.median([4, 1, 3, 2])).to eq(2.5)
    end

    it 'refuses fewer runs than a median is worth, naming the count' do
      expect { described_class.median([3.602, 2.796]) }.to raise_error(ArgumentError, %r{at least 3 runs, got 2})
    end

    it 'takes fewer when told to (one batch of boots is what it is)' do
      expect(described_class.median([3.602, 2.796], min: 1)).to be_within(1e-9).of(3.199)
    end

    it 'refuses a run that is not a number' do
      expect { described_class.median(['1', '2', 'three']) }.to raise_error(ArgumentError)
    end
  end

  describe '.p95' do
    it 'is nil below 20 values: a tail of 19 is only the maximum' do
      expect(described_class.p95((1..19).to_a)).to be_nil
    end

    it 'is the nearest-rank 95th percentile from 20 values on' do
      expect(described_class.p95((1..20).to_a)).to eq(19.0)
      expect(described_class.p95((1..100).to_a.reverse)).to eq(95.0)
    end
  end

  describe '.slope' do
    it 'fits a line through noisy points by least squares' do
      expect(described_class.slope([0, 100, 200, 300], [0.2, 0.21, 0.24, 0.25])).to be_within(1e-9).of(0.00018)
    end

    it 'is nil for one point or for every x the same' do
      expect(described_class.slope([100], [0.2])).to be_nil
      expect(described_class.slope([1, 1], [0.2, 0.3])).to be_nil
    end

    it 'refuses xs and ys of different lengths' do
      expect { described_class.slope([1, 2], [1]) }.to raise_error(ArgumentError, %r{2 xs but 1 ys})
    end
  end

  describe '.line and .fitted_max' do
    it 'gives the intercept with the slope' do
      intercept, slope = described_class.line([0, 100, 200, 300], [0.2, 0.21, 0.24, 0.25])
      expect(intercept).to be_within(1e-9).of(0.198)
      expect(slope).to be_within(1e-9).of(0.00018)
    end

    it 'takes the fitted line at its highest end, so one slow batch alone does not decide' do
      running = [0, 100, 200, 300, 400]
      expect(described_class.fitted_max(running, [0.2, 0.2, 0.2, 0.2, 0.4])).to be_within(1e-9).of(0.32)
      expect(described_class.fitted_max(running, [0.3, 0.25, 0.2, 0.15, 0.1])).to be_within(1e-9).of(0.3)
    end

    it 'is nil where no line is defined' do
      expect(described_class.line([100], [0.2])).to be_nil
      expect(described_class.fitted_max([1, 1], [0.2, 0.3])).to be_nil
    end
  end

  describe '.meets' do
    it 'holds a value to a threshold target either way' do
      expect(described_class.meets(0.3, '≤ 0.3')).to be(true)
      expect(described_class.meets(0.3, '< 0.3')).to be(false)
      expect(described_class.meets(99.2, '≥ 99')).to be(true)
      expect(described_class.meets(98, '> 99')).to be(false)
    end

    it 'judges nothing without a threshold or a value' do
      expect(described_class.meets(1, '–')).to be_nil
      expect(described_class.meets(1, 'all 1000')).to be_nil
      expect(described_class.meets(nil, '≤ 1')).to be_nil
    end
  end

  describe '.quote' do
    it 'quotes every run as measured, in the order they ran, with min and max' do
      expect(described_class.quote(['9.526', '16.190', '13.533'])).to eq('min 9.526, max 16.190; runs: 9.526 16.190 13.533')
    end

    it 'adds the p95 once there are enough runs to have one' do
      expect(described_class.quote((1..20).map(&:to_s))).to end_with('; p95 19.0')
    end
  end

  it 'gives a ratio with both of its sides' do
    value, note = described_class.ratio('3.498', '3.920', ['clone', 'plain'])
    expect(described_class.fixed(value)).to eq('0.892')
    expect(note).to eq('clone 3.498 / plain 3.920')
  end

  describe '.busiest' do
    it 'counts the most values in any 12 s stretch, the stretch half-open' do
      expect(described_class.busiest([0, 5, 11.9, 12, 30], 12)).to eq(3)
      expect(described_class.busiest([0, 12, 24], 12)).to eq(1)
    end

    it 'is 0 with no values' do
      expect(described_class.busiest([], 12)).to eq(0)
    end
  end
end
